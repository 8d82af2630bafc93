package rawmethods_test

import (
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/passtest"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/rawmethods"
)

// packages are the testdata packages checked for rule R1 (MCP001, MCP002,
// MCP003 and its opt-in literal fix): the packages where the pass finds
// something, the false-positive traps (example.com/traps/...) and already-
// migrated code (example.com/raw/migrated). The library stubs and helpers they
// import, and the packages this pass shares unchanged with the umbrella tests,
// live once in migratecheck/testdata/src (see passtest.Testdata).
var packages = []string{
	"example.com/apptheoryuse",
	"example.com/crossfix/server",
	"example.com/fineuse",
	"example.com/fixes/dualemit",
	"example.com/fixes/literals",
	"example.com/fixes/serveslegacy",
	"example.com/mcpgouse",
	"example.com/mcpkituse",
	"example.com/mixed/delegate/admin",
	"example.com/mixed/delegate/kit",
	"example.com/mixed/dualstack",
	"example.com/mixed/mcpgo",
	"example.com/mixed/modern",
	"example.com/mixed/raw",
	"example.com/mixed/stable/engine",
	"example.com/raw/mcp010",
	"example.com/raw/migrated",
	"example.com/raw/protocol",
	"example.com/raw/r1",
	"example.com/raw/r2sent",
	"example.com/raw/tables",
	"example.com/shapes/accessor",
	"example.com/shapes/accessoruse",
	"example.com/shapes/consts",
	"example.com/shapes/consts/methods",
	"example.com/shapes/crossext/engine",
	"example.com/shapes/dualclient",
	"example.com/shapes/rawwrap",
	"example.com/shapes/rawwrapuse",
	"example.com/shapes/sinks",
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
	"github.com/finemcp/finemcp",
	"github.com/finemcp/finemcp/internal/engine",
	"github.com/mark3labs/mcp-go/cmd/taskcli",
	"github.com/mark3labs/mcp-go/mcp",
	"github.com/theory-cloud/apptheory/v3/runtime/mcp",
	"github.com/tmc/mcp",
}

// TestRawmethods checks every finding of the pass before the root analyzer's
// policy (rule enablement, dual target, fix opt-in, suppression) applies:
// its positives, its false-positive traps (packages and lines with no want
// comment stay silent) and the fixes it offers against the .golden files.
func TestRawmethods(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, passtest.Testdata(t, packages...), passtest.Findings(rawmethods.Analyzer, notes), packages...)
}

// notes reports why a package still serves 2025-11-25 peers, the guard every
// opt-in fix obeys.
func notes(pass *analysis.Pass, res any) {
	if why := res.(*rawmethods.Result).ServesLegacy(); why != "" && len(pass.Files) > 0 {
		passtest.Note(pass, pass.Files[0].Name.Pos(), "%s", why)
	}
}
