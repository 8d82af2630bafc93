// Package time stands in for the standard library's time (see
// example.com/std/context for why).
package time

type Duration int64

type Time struct{ ns int64 }
