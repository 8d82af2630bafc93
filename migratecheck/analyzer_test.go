package migratecheck_test

import (
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// TestMCPGoCatalogue covers every catalogued mcp-go identifier (positives).
func TestMCPGoCatalogue(t *testing.T) {
	resetConfig(t)
	analysistest.Run(t, analysistest.TestData(), migratecheck.Analyzer, "example.com/mcpgouse", "example.com/mcpkituse", "example.com/fineuse", "example.com/apptheoryuse", "example.com/tmcuse", "example.com/raw/r1", "example.com/raw/a2a", "example.com/raw/r2", "example.com/raw/r3", "example.com/raw/r4", "example.com/raw/r5", "example.com/raw/r6", "example.com/raw/r7", "example.com/raw/mcp010", "example.com/raw/migrated", "example.com/mixed/...", "example.com/wrapperuse", "example.com/wrapper", "example.com/dotimport")
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
		"example.com/fixes/...", "example.com/suppress")
	fixes := 0
	for _, r := range results {
		for _, d := range r.Diagnostics {
			if len(d.SuggestedFixes) == 0 {
				continue
			}
			fixes++
			file := r.Pass.Fset.File(d.Pos).Name()
			for _, bad := range []string{"zz_generated.go", "storage.go", "dualemit", "serveslegacy"} {
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
