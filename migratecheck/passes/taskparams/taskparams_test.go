package taskparams_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/passtest"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/taskparams"
)

// packages are the testdata packages checked for rule R5 (MCP005, MCP013): the
// packages where the pass finds something, the false-positive traps
// (example.com/traps/...) and already-migrated code
// (example.com/raw/migrated). The library stubs and helpers they import, and
// the packages this pass shares unchanged with the umbrella tests, live once
// in migratecheck/testdata/src (see passtest.Testdata).
var packages = []string{
	"example.com/raw/migrated",
	"example.com/raw/r5",
	"example.com/traps/customproto",
	"example.com/traps/dropnotif",
	"example.com/traps/dynamo",
	"example.com/traps/notfoundtest",
	"example.com/traps/samples",
	"example.com/traps/taskstore",
	"example.com/traps/v2tools",
	"github.com/finemcp/finemcp",
	"github.com/mark3labs/mcp-go/mcp",
}

// TestTaskparams checks every finding of the pass before the root analyzer's
// policy (rule enablement, dual target, fix opt-in, suppression) applies:
// its positives, its false-positive traps (packages and lines with no want
// comment stay silent).
func TestTaskparams(t *testing.T) {
	analysistest.Run(t, passtest.Testdata(t, packages...), passtest.Findings(taskparams.Analyzer), packages...)
}
