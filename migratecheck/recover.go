package migratecheck

import (
	"fmt"
	"go/types"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
)

// InternalError is what the root analyzer returns for a package when one of
// its passes panicked. Every pass is written to tolerate missing type
// information, but a checker must never lose a whole run to one bad input:
// the panic is confined to the package it happened in, which is reported as
// an error (exit 1) while every other package is analysed as usual.
type InternalError struct {
	Package string
	Panics  []string // "pass: value (at file:line)"
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error analysing %s (please report it with the file that triggers it): %s",
		e.Package, strings.Join(e.Panics, "; "))
}

// panics records the recovered panics of the passes of each package under
// analysis until the root analyzer of that package collects them.
var panics sync.Map // *types.Package → *panicLog

type panicLog struct {
	mu   sync.Mutex
	msgs []string
}

func init() {
	seen := map[*analysis.Analyzer]bool{}
	var guard func(a *analysis.Analyzer)
	guard = func(a *analysis.Analyzer) {
		if seen[a] {
			return
		}
		seen[a] = true
		for _, r := range a.Requires {
			guard(r)
		}
		if a != Analyzer {
			a.Run = recovering(a, a.Run)
		}
	}
	guard(Analyzer)
	root := Analyzer.Run
	Analyzer.Run = func(pass *analysis.Pass) (res any, err error) {
		res, err = recovering(Analyzer, root)(pass)
		if v, ok := panics.LoadAndDelete(pass.Pkg); ok {
			l := v.(*panicLog)
			return nil, &InternalError{Package: pass.Pkg.Path(), Panics: l.msgs}
		}
		return res, err
	}
}

// recovering wraps a pass so that a panic is recorded for its package and
// the pass returns an empty result of its declared type: the passes that
// depend on it still run, and the root analyzer turns the record into an
// InternalError for this package only.
func recovering(a *analysis.Analyzer, run func(*analysis.Pass) (any, error)) func(*analysis.Pass) (any, error) {
	return func(pass *analysis.Pass) (res any, err error) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			recordPanic(pass.Pkg, fmt.Sprintf("pass %s panicked: %v%s", a.Name, r, panicSite()))
			res, err = nil, nil
			if t := a.ResultType; t != nil && t.Kind() == reflect.Pointer {
				res = reflect.New(t.Elem()).Interface()
			} else if t != nil {
				res = reflect.Zero(t).Interface()
			}
		}()
		return run(pass)
	}
}

func recordPanic(pkg *types.Package, msg string) {
	v, _ := panics.LoadOrStore(pkg, &panicLog{})
	l := v.(*panicLog)
	l.mu.Lock()
	l.msgs = append(l.msgs, msg)
	l.mu.Unlock()
}

// panicSite returns " (at file.go:line)" for the innermost frame of this
// module's code below the panic, or "".
func panicSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "github.com/tasksbridge/tasksbridge/migratecheck") &&
			!strings.HasSuffix(f.File, "/recover.go") {
			file := f.File
			if i := strings.LastIndex(file, "/migratecheck/"); i >= 0 {
				file = file[i+1:]
			}
			return fmt.Sprintf(" (at %s:%d)", file, f.Line)
		}
		if !more {
			return ""
		}
	}
}
