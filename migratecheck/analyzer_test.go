package migratecheck_test

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/catalog"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// positives are the packages of the main run: every catalogue identifier,
// every R-rule positive and false-positive trap, MCP010, MCP014, wrappers,
// dot-imports and already-migrated code.
var positives = []string{
	"example.com/mcpgouse", "example.com/mcpkituse", "example.com/fineuse", "example.com/apptheoryuse", "example.com/tmcuse",
	"example.com/raw/...", "example.com/mixed/...", "example.com/wrapper", "example.com/wrapperuse", "example.com/dotimport",
}

// TestCatalogue runs the default configuration over the positives and then
// checks that every catalogue identifier was matched somewhere: reported
// (root Report keys) or, for engine-only entries, recorded as legacy engine
// use by libapi.
func TestCatalogue(t *testing.T) {
	resetConfig(t)
	results := analysistest.Run(t, analysistest.TestData(), migratecheck.Analyzer, positives...)
	seen := map[string]bool{}
	category := map[string]string{}
	for _, r := range results {
		if rep, ok := r.Result.(*migratecheck.Report); ok {
			for _, f := range rep.Findings {
				seen[f.Key] = true
				category[f.Key] = f.Diagnostic.Category
			}
			for _, id := range rep.Engine {
				seen[id] = true
			}
		}
	}
	// A helper that calls tasks/get is not about the removed tasks/result.
	for _, key := range []string{"mcpgo:mcp.GetTaskResult", "mcpkit:client.GetTaskV1", "mcpkit:core.GetTaskResultV1"} {
		if category[key] != "MCP015" {
			t.Errorf("%s reported as %q, want MCP015 (tasks/get result shape)", key, category[key])
		}
	}
	for _, e := range catalog.Table() {
		if !seen[e.ID()] {
			t.Errorf("catalogue entry %s (%s) has no positive test", e.ID(), e.Rule)
		}
	}
	for _, key := range []string{"R1", "R2", "R2/task-param", "R3/struct", "R3/probe", "R3/map", "R4/map", "R4/struct",
		"R4/sampling", "R4/elicitation", "R5/map", "R5/index", "R5/struct", "R6/struct", "R6/map", "R7", "R8", "input_required",
		"R2/map", "R4/read", "R5/read"} {
		if !seen[key] {
			t.Errorf("raw rule %s has no positive test", key)
		}
	}
}

// TestFixes checks every opt-in SuggestedFix against .golden files and that
// generated files, storage records, dual-emit paths and packages still
// serving 2025-11-25 get no fix.
func TestFixes(t *testing.T) {
	resetConfig(t)
	s := settings.Default()
	s.FixTags, s.FixLiterals = true, true
	if err := migratecheck.Configure(s); err != nil {
		t.Fatal(err)
	}
	results := analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), migratecheck.Analyzer,
		"example.com/fixes/...", "example.com/suppress", "github.com/finemcp/finemcp/internal/engine")
	fixes := 0
	for _, r := range results {
		for _, d := range r.Diagnostics {
			if len(d.SuggestedFixes) == 0 {
				continue
			}
			fixes++
			file := r.Pass.Fset.File(d.Pos).Name()
			// internal/engine is a library's own legacy engine: the guards
			// hold there too (they never depend on the library family).
			for _, bad := range []string{"zz_generated.go", "storage.go", "dualemit", "serveslegacy", "internal/engine"} {
				if strings.Contains(file, bad) {
					t.Errorf("%s: fix attached in %s: %s", d.Category, file, d.Message)
				}
			}
		}
	}
	if fixes != 5 {
		t.Errorf("got %d diagnostics with fixes, want 5 (3 tags, 2 literals)", fixes)
	}
}

// TestFeatureProbeAndSettings runs an older mcp-go (v0.47.0 surface) and a
// fork defining ResultTypeTask (feature probe wording), and a package under
// non-default settings: target extension-only (no [info] lowering), a
// disabled rule (no findings, its directives not "unused"), and a custom
// method-call-funcs list.
func TestFeatureProbeAndSettings(t *testing.T) {
	resetConfig(t)
	s := settings.Default()
	s.Libraries[settings.FamilyMCPGo] = []string{"github.com/mark3labs/mcp-go", "example.com/future/mcp-go"}
	s.Target = settings.TargetExtensionOnly
	s.Enabled = map[string]bool{"MCP011": false}
	s.MethodCallFuncs = []string{"Invoke"}
	if err := migratecheck.Configure(s); err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, filepath.Join(analysistest.TestData(), "old"), migratecheck.Analyzer,
		"example.com/oldprobe", "example.com/futureprobe", "example.com/config")
}
