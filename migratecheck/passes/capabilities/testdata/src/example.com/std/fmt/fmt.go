// Package fmt stands in for the standard library's fmt (see
// example.com/std/context for why).
package fmt

func Errorf(format string, a ...any) error { return nil }
func Sprint(a ...any) string               { return "" }
func Printf(format string, a ...any)       {}
