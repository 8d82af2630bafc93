package settings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
)

const fullYAML = `
rules: [all, -MCP011]
severity:
  MCP003: warning
libraries:
  mcpgo: [github.com/mark3labs/mcp-go, example.com/fork/mcp-go]
  mcpkit: []
method_call_funcs: [Invoke]
target: extension-only
fix:
  tags: true
fail_on: warning
tests: false
`

const fullJSON = `{
  "rules": "all,-MCP011",
  "severity": {"MCP003": "warning"},
  "libraries": {"mcpgo": ["github.com/mark3labs/mcp-go", "example.com/fork/mcp-go"], "mcpkit": []},
  "method_call_funcs": ["Invoke"],
  "target": "extension-only",
  "fix": {"tags": true},
  "fail_on": "warning",
  "tests": false
}`

// TestConfigMapsToSettings: both formats map every key into Settings
// and the driver-level knobs.
func TestConfigMapsToSettings(t *testing.T) {
	for _, c := range []struct {
		name   string
		data   string
		isJSON bool
	}{{"yaml", fullYAML, false}, {"json", fullJSON, true}} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(c.data), c.isJSON)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Resolve(cfg, Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			s := r.Settings
			if s.RuleEnabled("MCP011") || !s.RuleEnabled("MCP001") || !s.RuleEnabled("MCP014") {
				t.Errorf("enabled = %v", s.Enabled)
			}
			if got := s.Libraries[FamilyMCPGo]; !slices.Equal(got, []string{"github.com/mark3labs/mcp-go", "example.com/fork/mcp-go"}) {
				t.Errorf("mcpgo prefixes = %v", got)
			}
			if got, ok := s.Libraries[FamilyMCPKit]; !ok || len(got) != 0 {
				t.Errorf("mcpkit must be disabled by an empty list, got %v (present %v)", got, ok)
			}
			if got := s.Libraries[FamilyFineMCP]; len(got) == 0 {
				t.Error("unlisted family lost its defaults")
			}
			if !slices.Contains(s.MethodCallFuncs, "Invoke") || !slices.Contains(s.MethodCallFuncs, "CallRaw") {
				t.Errorf("method_call_funcs must extend the defaults: %v", s.MethodCallFuncs)
			}
			if s.Target != TargetExtensionOnly || !s.FixTags || s.FixLiterals {
				t.Errorf("target/fix = %q %v %v", s.Target, s.FixTags, s.FixLiterals)
			}
			if r.Severity["MCP003"] != rules.Warning || r.FailOn != rules.Warning || r.Tests {
				t.Errorf("severity/fail_on/tests = %v %q %v", r.Severity, r.FailOn, r.Tests)
			}
		})
	}
}

// TestFlagsWinOverConfig: command-line overrides are applied on top.
func TestFlagsWinOverConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(fullYAML), false)
	if err != nil {
		t.Fatal(err)
	}
	f, tr := false, true
	r, err := Resolve(cfg, Overrides{Rules: "-MCP001", Severity: "MCP003=info", Target: "dual", FailOn: "error", FixTags: &f, FixLiterals: &tr, Tests: &tr})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Settings
	if s.RuleEnabled("MCP001") || s.RuleEnabled("MCP011") || !s.RuleEnabled("MCP002") {
		t.Errorf("-rules -MCP001 must modify the config selection: %v", s.Enabled)
	}
	if r.Severity["MCP003"] != rules.Info || r.FailOn != rules.Error || s.Target != TargetDual || s.FixTags || !s.FixLiterals || !r.Tests {
		t.Errorf("overrides not applied: %+v %+v", r, s)
	}
}

func TestConfigRejectsBadInput(t *testing.T) {
	bad := []struct {
		name, data string
		isJSON     bool
	}{
		{"unknown key yaml", "rulez: [all]\n", false},
		{"unknown key json", `{"rulez": "all"}`, true},
		{"bad severity", "severity: {MCP001: fatal}\n", false},
		{"bad target", "target: modern\n", false},
		{"bad fail_on", "fail_on: never\n", false},
		{"bad prefix", "libraries: {mcpgo: ['a b']}\n", false},
		{"not yaml", "rules: [\n", false},
		{"rules wrong type", "rules: {a: b}\n", false},
	}
	for _, c := range bad {
		if _, err := ParseConfig([]byte(c.data), c.isJSON); err == nil {
			t.Errorf("%s: accepted %q", c.name, c.data)
		}
	}
	// Semantically invalid values are caught when resolving.
	for _, data := range []string{"rules: [MCP999]\n", "severity: {MCP999: error}\n", "libraries: {nosuch: [x]}\n", "rules: [-MCP000]\n"} {
		cfg, err := ParseConfig([]byte(data), false)
		if err != nil {
			continue
		}
		if _, err := Resolve(cfg, Overrides{}); err == nil {
			t.Errorf("Resolve accepted %q", data)
		}
	}
	if cfg, err := ParseConfig(nil, false); err != nil || cfg == nil {
		t.Errorf("empty YAML file must be the empty config: %v", err)
	}
}

// TestFindConfig: discovery walks up from the working directory and stops at
// the module root.
func TestFindConfig(t *testing.T) {
	root := t.TempDir()
	mod := filepath.Join(root, "mod")
	sub := filepath.Join(mod, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(mod, "go.mod"), "module x\n")
	// Above the module root: must not be found.
	write(filepath.Join(root, ".migrate-check.yaml"), "rules: [none]\n")
	if p, err := FindConfig(sub); err != nil || p != "" {
		t.Errorf("config above the module root was found: %q %v", p, err)
	}
	write(filepath.Join(mod, ".migrate-check.json"), `{"target":"dual"}`)
	if p, _ := FindConfig(sub); p != filepath.Join(mod, ".migrate-check.json") {
		t.Errorf("FindConfig = %q", p)
	}
	write(filepath.Join(mod, "a", ".migrate-check.yml"), "target: dual\n")
	if p, _ := FindConfig(sub); p != filepath.Join(mod, "a", ".migrate-check.yml") {
		t.Errorf("nearest config not preferred: %q", p)
	}
	cfg, err := LoadConfigFor(sub, "")
	if err != nil || cfg == nil || !strings.HasSuffix(cfg.Path, ".migrate-check.yml") {
		t.Errorf("LoadConfigFor = %+v, %v", cfg, err)
	}
	if cfg, err := LoadConfigFor(sub, "none"); err != nil || cfg != nil {
		t.Errorf("-config none = %+v, %v", cfg, err)
	}
	if _, err := LoadConfigFor(sub, filepath.Join(root, "missing.yaml")); err == nil {
		t.Error("missing explicit config accepted")
	}
}

func TestParseRuleSelection(t *testing.T) {
	on := func(m map[string]bool) []string {
		var ids []string
		for id, v := range m {
			if v {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids
	}
	n := len(rules.All())
	cases := []struct {
		toks []string
		base map[string]bool
		want int      // number enabled
		has  []string // must be enabled
		not  []string // must be disabled
	}{
		{nil, nil, n, []string{"MCP001"}, nil},
		{[]string{"all"}, nil, n, nil, nil},
		{[]string{"all", "-MCP011"}, nil, n - 1, nil, []string{"MCP011"}},
		{[]string{"-mcp011"}, nil, n - 1, nil, []string{"MCP011"}},
		{[]string{"MCP001", "MCP002"}, nil, 2, []string{"MCP001", "MCP002"}, []string{"MCP003"}},
		{[]string{"none", "+MCP014"}, nil, 1, []string{"MCP014"}, nil},
		{[]string{"+MCP011"}, map[string]bool{"MCP011": false, "MCP003": false}, n - 1, []string{"MCP011"}, []string{"MCP003"}},
		{[]string{"all"}, map[string]bool{"MCP003": false}, n, []string{"MCP003"}, nil},
		{[]string{"MCP000", "MCP001"}, nil, 1, []string{"MCP001"}, nil},
	}
	for _, c := range cases {
		got, err := ParseRuleSelection(c.toks, c.base)
		if err != nil {
			t.Errorf("%v: %v", c.toks, err)
			continue
		}
		ids := on(got)
		if len(ids) != c.want {
			t.Errorf("%v on %v: %d enabled (%v), want %d", c.toks, c.base, len(ids), ids, c.want)
		}
		for _, id := range c.has {
			if !got[id] {
				t.Errorf("%v: %s disabled", c.toks, id)
			}
		}
		for _, id := range c.not {
			if got[id] {
				t.Errorf("%v: %s enabled", c.toks, id)
			}
		}
	}
	for _, bad := range [][]string{{"MCP999"}, {"-MCP000"}, {"all", "bogus"}} {
		if _, err := ParseRuleSelection(bad, nil); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestSeverityFor(t *testing.T) {
	r := &Resolved{Severity: map[string]rules.Severity{"MCP004": rules.Warning}}
	def, _ := rules.Lookup("MCP004")
	if got := r.SeverityFor("MCP004", def.Severity); got != rules.Warning {
		t.Errorf("override not applied: %s", got)
	}
	// A severity the analyzer lowered for context (dual-mode server code) stays.
	if got := r.SeverityFor("MCP004", rules.Info); got != rules.Info {
		t.Errorf("context severity replaced: %s", got)
	}
	if got := r.SeverityFor("MCP001", rules.Error); got != rules.Error {
		t.Errorf("no override: %s", got)
	}
	if _, err := ParseSeverities("MCP001"); err == nil {
		t.Error("severity without = accepted")
	}
}
