package tasktags_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/passtest"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/tasktags"
)

// packages are the testdata packages checked for rule R2 (MCP006, MCP007,
// MCP005 and the opt-in tag rename fix): the packages where the pass finds
// something, the false-positive traps (example.com/traps/...) and already-
// migrated code (example.com/raw/migrated). The library stubs and helpers they
// import, and the packages this pass shares unchanged with the umbrella tests,
// live once in migratecheck/testdata/src (see passtest.Testdata).
var packages = []string{
	"example.com/crossfix/wire",
	"example.com/fixes/serveslegacy",
	"example.com/fixes/tags",
	"example.com/raw/migrated",
	"example.com/raw/r2",
	"example.com/raw/r2sent",
	"example.com/raw/r5",
	"example.com/traps/customproto",
	"example.com/traps/dropnotif",
	"example.com/traps/dynamo",
	"example.com/traps/notfoundtest",
	"example.com/traps/samples",
	"example.com/traps/taskstore",
	"example.com/traps/v2tools",
	"github.com/finemcp/finemcp",
	"github.com/finemcp/finemcp/internal/engine",
	"github.com/mark3labs/mcp-go/mcp",
	"github.com/panyam/mcpkit/core",
	"github.com/theory-cloud/apptheory/v3/runtime/mcp",
	"github.com/tmc/mcp",
}

// TestTasktags checks every finding of the pass before the root analyzer's
// policy (rule enablement, dual target, fix opt-in, suppression) applies:
// its positives, its false-positive traps (packages and lines with no want
// comment stay silent) and the fixes it offers against the .golden files.
func TestTasktags(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, passtest.Testdata(t, packages...), passtest.Findings(tasktags.Analyzer), packages...)
}
