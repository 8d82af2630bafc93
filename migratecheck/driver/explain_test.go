package driver

import (
	"errors"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// TestExplain: -explain prints before/after code and the spec section of
// every rule, and rejects unknown IDs.
func TestExplain(t *testing.T) {
	for _, r := range catalogue() {
		var b strings.Builder
		if err := Explain(&b, strings.ToLower(r.ID)); err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		out := b.String()
		for _, want := range []string{r.ID, r.Title, "Severity: " + string(r.Severity), "Before (2025-11-25):", "After (io.modelcontextprotocol/tasks):", "Spec:", r.HelpURI} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: explain output lacks %q:\n%s", r.ID, want, out)
			}
		}
		if r.Fix == rules.FixOptIn && !strings.Contains(out, "-"+r.FixFlag) {
			t.Errorf("%s: explain does not name the fix flag", r.ID)
		}
	}
	if err := Explain(&strings.Builder{}, "MCP999"); !errors.Is(err, ErrNoRule) {
		t.Errorf("unknown rule: %v", err)
	}
}

// TestListRules: one line per rule, with the effective severity and
// enablement from the configuration.
func TestListRules(t *testing.T) {
	cfg, err := settings.ParseConfig([]byte("rules: [all, -MCP011]\nseverity: {MCP003: info}\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := settings.Resolve(cfg, settings.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := ListRules(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != len(catalogue())+1 {
		t.Fatalf("%d lines, want header + %d:\n%s", len(lines), len(catalogue()), b.String())
	}
	find := func(id string) []string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == id {
				return f
			}
		}
		t.Fatalf("no line for %s", id)
		return nil
	}
	if f := find("MCP011"); !strings.Contains(strings.Join(f, " "), " no ") {
		t.Errorf("MCP011 not shown disabled: %v", f)
	}
	if f := find("MCP003"); f[1] != "info" {
		t.Errorf("MCP003 severity = %v", f)
	}
	if f := find("MCP006"); f[2] != "opt-in" || f[3] != "-fix-tags" {
		t.Errorf("MCP006 fix = %v", f)
	}
}
