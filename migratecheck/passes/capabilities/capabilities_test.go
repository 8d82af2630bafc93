package capabilities_test

import (
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/passtest"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/capabilities"
)

// packages are the testdata packages checked for rule R4 (MCP004, MCP013): the
// packages where the pass finds something, the false-positive traps
// (example.com/traps/...) and already-migrated code
// (example.com/raw/migrated). The library stubs and helpers they import, and
// the packages this pass shares unchanged with the umbrella tests, live once
// in migratecheck/testdata/src (see passtest.Testdata).
var packages = []string{
	"example.com/mixed/delegate/kit",
	"example.com/mixed/dualstack",
	"example.com/mixed/mcpgo",
	"example.com/mixed/modern",
	"example.com/mixed/onlyext",
	"example.com/mixed/raw",
	"example.com/mixed/stable/advert",
	"example.com/raw/migrated",
	"example.com/raw/r4",
	"example.com/raw/r7",
	"example.com/shapes/capvar",
	"example.com/shapes/crossext/advert",
	"example.com/shapes/crossext/front",
	"example.com/shapes/crossext/server",
	"example.com/traps/customproto",
	"example.com/traps/dropnotif",
	"example.com/traps/dynamo",
	"example.com/traps/notfoundtest",
	"example.com/traps/samples",
	"example.com/traps/taskstore",
	"example.com/traps/v2tools",
	"github.com/finemcp/finemcp",
	"github.com/mark3labs/mcp-go/mcp",
	"github.com/panyam/mcpkit/core",
}

// TestCapabilities checks every finding of the pass before the root
// analyzer's policy (rule enablement, dual target, fix opt-in, suppression)
// applies: its positives, its false-positive traps (packages and lines with
// no want comment stay silent).
func TestCapabilities(t *testing.T) {
	analysistest.Run(t, passtest.Testdata(t, packages...), passtest.Findings(capabilities.Analyzer, notes), packages...)
}

// notes reports each extension advertisement the pass records (the root
// analyzer uses them for the dual-stack policy and passes/mixed for MCP014).
func notes(pass *analysis.Pass, res any) {
	for _, a := range res.(*capabilities.Result).Adverts {
		passtest.Note(pass, a.Pos, "advertises the extension")
	}
}
