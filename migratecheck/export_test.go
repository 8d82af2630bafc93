package migratecheck

import (
	"errors"
	"go/types"
	"reflect"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
)

// RecoverForTest runs f as the body of a guarded pass and returns the
// InternalError the root analyzer would return for its package.
func RecoverForTest(f func()) error {
	a := &analysis.Analyzer{Name: "boom", ResultType: reflect.TypeFor[*finding.Result]()}
	pkg := types.NewPackage("example.com/boom", "boom")
	res, err := recovering(a, func(*analysis.Pass) (any, error) { f(); return &finding.Result{}, nil })(&analysis.Pass{Pkg: pkg})
	if _, ok := res.(*finding.Result); !ok || err != nil {
		return errors.New("the guarded pass did not return an empty result of its type")
	}
	v, ok := panics.LoadAndDelete(pkg)
	if !ok {
		return nil
	}
	return &InternalError{Package: pkg.Path(), Panics: v.(*panicLog).msgs}
}
