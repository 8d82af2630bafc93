package libapi_test

import (
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/passtest"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/libapi"
)

// packages are the testdata packages checked for the library catalogue
// (MCP001–MCP015 through mark3labs/mcp-go, mcpkit, finemcp, apptheory, tmc/mcp
// and user wrappers): the packages where the pass finds something, the
// false-positive traps (example.com/traps/...) and already-migrated code
// (example.com/raw/migrated). The library stubs and helpers they import, and
// the packages this pass shares unchanged with the umbrella tests, live once
// in migratecheck/testdata/src (see passtest.Testdata).
var packages = []string{
	"example.com/apptheoryuse",
	"example.com/dotimport",
	"example.com/fineuse",
	"example.com/mcpgouse",
	"example.com/mcpkituse",
	"example.com/mixed/mcpgo",
	"example.com/mixed/modern",
	"example.com/raw/mcp010",
	"example.com/raw/migrated",
	"example.com/shapes/accessor",
	"example.com/shapes/accessoruse",
	"example.com/shapes/reads",
	"example.com/tmcuse",
	"example.com/traps/customproto",
	"example.com/traps/dropnotif",
	"example.com/traps/dynamo",
	"example.com/traps/notfoundtest",
	"example.com/traps/samples",
	"example.com/traps/taskstore",
	"example.com/traps/v2tools",
	"example.com/wrapper",
	"example.com/wrapperuse",
	"github.com/finemcp/finemcp/client",
	"github.com/finemcp/finemcp/internal/engine",
	"github.com/mark3labs/mcp-go/client",
	"github.com/mark3labs/mcp-go/cmd/taskcli",
	"github.com/mark3labs/mcp-go/server",
	"github.com/panyam/mcpkit/client",
}

// TestLibapi checks every finding of the pass before the root analyzer's
// policy (rule enablement, dual target, fix opt-in, suppression) applies:
// its positives, its false-positive traps (packages and lines with no want
// comment stay silent).
func TestLibapi(t *testing.T) {
	analysistest.Run(t, passtest.Testdata(t, packages...), passtest.Findings(libapi.Analyzer, notes), packages...)
}

// notes reports each use of a catalogue entry that only shows a 2025-11-25
// task engine (no rule of its own; passes/mixed uses them for MCP014).
func notes(pass *analysis.Pass, res any) {
	for _, u := range res.(*libapi.Result).Engine {
		passtest.Note(pass, u.Pos, "2025-11-25 engine: %s", u.Name)
	}
}
