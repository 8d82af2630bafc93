package migratecheck_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// TestIndirectShapes covers the legacy uses that are only visible through
// indirection: user-defined method sinks (any case, any package, via facts),
// constants declared in another file or package and handler tables,
// capability maps built in a variable, client capability structs, the
// two-key nested task decode, _meta keys as struct tags, task-param
// accessors (facts), reads worded as reads, and MCP014 across the packages
// of a module. Library packages are analysed like any code: a CLI under a
// library's import path and a library's own task engine get findings.
func TestIndirectShapes(t *testing.T) {
	resetConfig(t)
	analysistest.Run(t, analysistest.TestData(), migratecheck.Analyzer,
		"example.com/shapes/...",
		"github.com/mark3labs/mcp-go/cmd/taskcli",
		"github.com/finemcp/finemcp/internal/engine")
}

// TestTraps runs the false-positive traps: each package must produce no
// diagnostic at all (a client dropping notifications/tasks/status, a test
// asserting METHOD_NOT_FOUND for removed methods, taskSupport still used by
// an extension engine, DynamoDB task records and their ttl attribute, a
// storage layer's envelopes and documents, sample method names and
// METHOD_NOT_FOUND assertion helpers in tests, an audit label switch and a
// named drop handler, a pre-MCP protocol with its own tasks/ methods).
func TestTraps(t *testing.T) {
	resetConfig(t)
	results := analysistest.Run(t, analysistest.TestData(), migratecheck.Analyzer, "example.com/traps/...")
	pkgs := map[string]bool{}
	for _, r := range results {
		pkgs[r.Pass.Pkg.Path()] = true
	}
	for _, want := range []string{"example.com/traps/dropnotif", "example.com/traps/notfoundtest", "example.com/traps/v2tools", "example.com/traps/dynamo",
		"example.com/traps/taskstore", "example.com/traps/samples", "example.com/traps/customproto"} {
		if !pkgs[want] {
			t.Errorf("trap package %s was not analysed", want)
		}
	}
}

// TestFixGuardAcrossPackages: a wire type whose own package shows no legacy
// evidence, used by another package that still serves 2025-11-25 with it,
// gets no fix, and its message says which package serves it: the
// declaring package's pass reads the other packages' files, so every
// driver gives this answer (before, only a driver that analysed both
// packages in one run could withhold the fix, through Report.LegacyTypes).
func TestFixGuardAcrossPackages(t *testing.T) {
	resetConfig(t)
	s := settings.Default()
	s.FixTags = true
	if err := migratecheck.Configure(s); err != nil {
		t.Fatal(err)
	}
	results := analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), migratecheck.Analyzer, "example.com/crossfix/...")
	for _, r := range results {
		rep, ok := r.Result.(*migratecheck.Report)
		if !ok {
			continue
		}
		for _, f := range rep.Findings {
			if len(f.Diagnostic.SuggestedFixes) > 0 {
				t.Errorf("fix offered on %s: %s", f.FixSubject, f.Diagnostic.Message)
			}
		}
	}
}
