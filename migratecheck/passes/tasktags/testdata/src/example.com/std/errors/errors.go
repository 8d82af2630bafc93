// Package errors stands in for the standard library's errors (see
// example.com/std/context for why).
package errors

type errorString struct{ s string }

func (e *errorString) Error() string { return e.s }

func New(text string) error { return &errorString{text} }

func Is(err, target error) bool { return err == target }
