package reexport_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/passtest"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/reexport"
)

// packages are the testdata packages checked for wrapper facts: the
// packages where the pass finds something, the false-positive traps (example.com/traps/...) and already-migrated code
// (example.com/raw/migrated). The library stubs and helpers they import, and
// the packages this pass shares unchanged with the umbrella tests, live once
// in migratecheck/testdata/src (see passtest.Testdata).
var packages = []string{
	"example.com/mcpgouse",
	"example.com/raw/migrated",
	"example.com/shapes/accessor",
	"example.com/traps/customproto",
	"example.com/traps/dropnotif",
	"example.com/traps/dynamo",
	"example.com/traps/notfoundtest",
	"example.com/traps/samples",
	"example.com/traps/taskstore",
	"example.com/traps/v2tools",
	"example.com/wrapper",
}

// TestReexport checks the facts the pass exports (`// want Name:"…"` on the
// wrapper's declaration): wrappers that re-declare a catalogued library
// object, accessors that read a catalogued per-request task field, and no
// fact for look-alikes (the traps and already-migrated packages).
func TestReexport(t *testing.T) {
	analysistest.Run(t, passtest.Testdata(t, packages...), reexport.Analyzer, packages...)
}
