package migratecheck_test

import (
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck"
	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// resetConfig restores the default configuration after a test that changes
// the (process-global) analyzer flags.
func resetConfig(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		if err := migratecheck.Configure(settings.Default()); err != nil {
			t.Errorf("reset: %v", err)
		}
	})
}

func flagValue(t *testing.T, name string) string {
	t.Helper()
	f := migratecheck.Analyzer.Flags.Lookup(name)
	if f == nil {
		t.Fatalf("analyzer has no flag %q", name)
	}
	return f.Value.String()
}

func TestAnalyzersContract(t *testing.T) {
	as := migratecheck.Analyzers()
	if len(as) != 1 || as[0] != migratecheck.Analyzer || as[0].Name != "migratecheck" {
		t.Fatalf("Analyzers() = %v, want the single root analyzer", as)
	}
	if err := analysis.Validate(as); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	for _, name := range []string{"libraries", "method-call-funcs", "target", "rules", "fix-tags", "fix-literals"} {
		f := migratecheck.Analyzer.Flags.Lookup(name)
		if f == nil || f.Usage == "" {
			t.Errorf("flag -migratecheck.%s missing or undocumented", name)
		}
	}
}

func TestConfigureSetsFlags(t *testing.T) {
	resetConfig(t)
	s := settings.Default()
	s.Libraries[settings.FamilyMCPGo] = []string{"github.com/mark3labs/mcp-go", "example.com/fork/mcp-go"}
	s.Libraries[settings.FamilyTMC] = nil
	s.MethodCallFuncs = []string{"Invoke", "Send*"}
	s.Target = settings.TargetExtensionOnly
	s.Enabled = map[string]bool{"MCP011": false}
	s.FixTags = true
	if err := migratecheck.Configure(s); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"target":            "extension-only",
		"rules":             "all,-MCP011",
		"fix-tags":          "true",
		"fix-literals":      "false",
		"method-call-funcs": "Invoke,Send*",
	} {
		if got := flagValue(t, name); got != want {
			t.Errorf("-migratecheck.%s = %q, want %q", name, got, want)
		}
	}
	libs := flagValue(t, "libraries")
	for _, want := range []string{"mcpgo=example.com/fork/mcp-go", "mcpgo=github.com/mark3labs/mcp-go", "tmcmcp=,", "finemcp=github.com/finemcp/finemcp"} {
		if !strings.Contains(libs+",", want) {
			t.Errorf("-migratecheck.libraries = %q, missing %q", libs, want)
		}
	}
}

func TestConfigureRejectsBadSettings(t *testing.T) {
	resetConfig(t)
	for name, mutate := range map[string]func(*settings.Settings){
		"family":  func(s *settings.Settings) { s.Libraries["nope"] = []string{"x"} },
		"target":  func(s *settings.Settings) { s.Target = "modern" },
		"rule":    func(s *settings.Settings) { s.Enabled = map[string]bool{"MCP099": false} },
		"mcp000":  func(s *settings.Settings) { s.Enabled = map[string]bool{"MCP000": false} },
		"funcs":   func(s *settings.Settings) { s.MethodCallFuncs = []string{"a b"} },
		"libpath": func(s *settings.Settings) { s.Libraries["mcpgo"] = []string{"a,b"} },
	} {
		s := settings.Default()
		mutate(&s)
		if err := migratecheck.Configure(s); err == nil {
			t.Errorf("%s: Configure accepted invalid settings", name)
		}
	}
	for flagName, bad := range map[string]string{"rules": "all,-MCP000", "target": "x", "libraries": "mcpgo", "fix-tags": "maybe"} {
		if err := migratecheck.Analyzer.Flags.Set(flagName, bad); err == nil {
			t.Errorf("-migratecheck.%s=%q accepted", flagName, bad)
		}
	}
}

func TestRulesFlagSyntax(t *testing.T) {
	resetConfig(t)
	if err := migratecheck.Analyzer.Flags.Set("rules", "MCP001,MCP002"); err != nil {
		t.Fatal(err)
	}
	if got := flagValue(t, "rules"); got != "all,-MCP003,-MCP004,-MCP005,-MCP006,-MCP007,-MCP008,-MCP009,-MCP010,-MCP011,-MCP012,-MCP013,-MCP014,-MCP015" {
		t.Errorf("only-listed rules: got %q", got)
	}
	if err := migratecheck.Analyzer.Flags.Set("rules", "-mcp011"); err != nil {
		t.Fatal(err)
	}
	if got := flagValue(t, "rules"); got != "all,-MCP011" {
		t.Errorf("negation: got %q", got)
	}
}

func TestSeverityOf(t *testing.T) {
	cases := []struct {
		d    analysis.Diagnostic
		want rules.Severity
	}{
		{analysis.Diagnostic{Category: "MCP001", Message: "x"}, rules.Error},
		{analysis.Diagnostic{Category: "MCP012", Message: "x"}, rules.Info},
		{analysis.Diagnostic{Category: "MCP004", Message: "x [info]"}, rules.Info},
		{analysis.Diagnostic{Category: "MCP000", Message: "unused [warning]"}, rules.Warning},
		{analysis.Diagnostic{Category: "other", Message: "x"}, rules.Warning},
	}
	for _, c := range cases {
		if got := migratecheck.SeverityOf(c.d); got != c.want {
			t.Errorf("SeverityOf(%+v) = %s, want %s", c.d, got, c.want)
		}
	}
}

func TestRuleCatalogue(t *testing.T) {
	all := rules.All()
	if len(all) != 15 {
		t.Fatalf("All() has %d rules, want 15", len(all))
	}
	for i, r := range all {
		if want := "MCP0" + twoDigits(i+1); r.ID != want {
			t.Errorf("rule %d is %s, want %s", i, r.ID, want)
		}
		if r.Name == "" || r.Title == "" || r.Summary == "" || r.Spec == "" || r.Before == "" || r.After == "" || !r.Severity.Valid() {
			t.Errorf("%s: incomplete rule %+v", r.ID, r)
		}
		if r.HelpURI != "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/"+r.ID+".md" {
			t.Errorf("%s: HelpURI %q", r.ID, r.HelpURI)
		}
		if (r.Fix == rules.FixOptIn) != (r.FixFlag != "") || (r.Fix != rules.FixOptIn && r.Fix != rules.FixNone) {
			t.Errorf("%s: Fix %q with FixFlag %q", r.ID, r.Fix, r.FixFlag)
		}
		if r.FixFlag != "" && migratecheck.Analyzer.Flags.Lookup(r.FixFlag) == nil {
			t.Errorf("%s: FixFlag %q is not a migratecheck flag", r.ID, r.FixFlag)
		}
		if got, ok := rules.Lookup(strings.ToLower(r.ID)); !ok || got.ID != r.ID {
			t.Errorf("Lookup(%s) failed", r.ID)
		}
	}
	if d, ok := rules.Lookup("MCP000"); !ok || d.Severity != rules.Error || d.ID != rules.Directive().ID {
		t.Errorf("MCP000 pseudo-rule: %+v %v", d, ok)
	}
	if _, ok := rules.Lookup("MCP016"); ok {
		t.Error("Lookup(MCP016) succeeded")
	}
}

func twoDigits(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }
