package golangci

import (
	"strings"
	"testing"

	"github.com/golangci/plugin-module-register/register"

	"github.com/tasksbridge/tasksbridge/migratecheck"
)

// TestPluginRegistersAndConfigures checks the golangci-lint entry point: the
// plugin is registered under "migratecheck", settings with the
// .migrate-check.yaml keys reach the analyzer flags, and typos are rejected.
func TestPluginRegistersAndConfigures(t *testing.T) {
	newPlugin, err := register.GetPlugin("migratecheck")
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(map[string]any{
		"rules":  "all,-MCP011",
		"target": "extension-only",
		"fix":    map[string]any{"tags": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.GetLoadMode() != register.LoadModeTypesInfo {
		t.Errorf("load mode = %q", p.GetLoadMode())
	}
	as, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 || as[0].Name != migratecheck.Analyzer.Name || as[0].Flags.Lookup("rules") == nil {
		t.Fatalf("analyzers = %v", as)
	}
	fl := migratecheck.Analyzer.Flags
	if got := fl.Lookup("rules").Value.String(); !strings.Contains(got, "-MCP011") {
		t.Errorf("rules flag = %q, want MCP011 disabled", got)
	}
	if got := fl.Lookup("target").Value.String(); got != "extension-only" {
		t.Errorf("target flag = %q", got)
	}
	if got := fl.Lookup("fix-tags").Value.String(); got != "true" {
		t.Errorf("fix-tags flag = %q", got)
	}

	if _, err := New(map[string]any{"rulez": "all"}); err == nil {
		t.Error("unknown settings key accepted")
	}
	if _, err := New(map[string]any{"rules": "MCP999"}); err == nil {
		t.Error("unknown rule accepted")
	}
	if _, err := New(nil); err != nil {
		t.Errorf("no settings: %v", err)
	}
}
