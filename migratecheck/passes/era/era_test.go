package era_test

import (
	"go/ast"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/passtest"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/era"
)

// packages are the testdata packages checked for dual-era detection (no rule
// of its own: it lowers legacy findings to notes): the packages where the pass
// finds something, the false-positive traps (example.com/traps/...) and
// already-migrated code (example.com/raw/migrated). The library stubs and
// helpers they import, and the packages this pass shares unchanged with the
// umbrella tests, live once in migratecheck/testdata/src (see
// passtest.Testdata).
var packages = []string{
	"example.com/mixed/dualstack",
	"example.com/raw/mcp010",
	"example.com/raw/migrated",
	"example.com/raw/r3",
	"example.com/shapes/dualclient",
	"example.com/traps/customproto",
	"example.com/traps/dropnotif",
	"example.com/traps/dynamo",
	"example.com/traps/notfoundtest",
	"example.com/traps/samples",
	"example.com/traps/taskstore",
	"example.com/traps/v2tools",
	"github.com/finemcp/finemcp/internal/engine",
	"github.com/mark3labs/mcp-go/mcp",
}

// TestEra checks every finding of the pass before the root analyzer's policy
// (rule enablement, dual target, fix opt-in, suppression) applies: its
// positives, its false-positive traps (packages and lines with no want
// comment stay silent).
func TestEra(t *testing.T) {
	analysistest.Run(t, passtest.Testdata(t, packages...), passtest.Findings(era.Analyzer, notes), packages...)
}

// notes reports what the pass records: a package that implements the
// extension, and each function that branches on the negotiated protocol
// version.
func notes(pass *analysis.Pass, res any) {
	r := res.(*era.Result)
	if r.Implements && len(pass.Files) > 0 {
		passtest.Note(pass, pass.Files[0].Name.Pos(), "implements the tasks extension")
	}
	for _, f := range pass.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && r.Branches(fd.Body.Lbrace) {
				passtest.Note(pass, fd.Name.Pos(), "%s branches on the protocol version", fd.Name.Name)
			}
		}
	}
}
