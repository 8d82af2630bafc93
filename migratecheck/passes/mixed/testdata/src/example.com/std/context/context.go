// Package context stands in for the standard library's context in testdata.
// Importing any real standard-library package makes analysistest type-check
// the runtime from source, which costs about 20 s per run under -race; the
// analyzers never look at these types.
package context

type Context interface {
	Done() <-chan struct{}
}

func Background() Context { return nil }
