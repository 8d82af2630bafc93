package settings

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
)

// Resolved is the effective configuration: the config file with the
// command-line flags on top.
type Resolved struct {
	Settings Settings
	// Severity overrides the default severity per rule ID.
	Severity map[string]rules.Severity
	// FailOn is the lowest severity that makes the run exit 3; "" means the
	// format's default (text: any finding; json/sarif: never).
	FailOn rules.Severity
	Tests  bool
	// ConfigPath is the configuration file used ("" if none).
	ConfigPath string
}

// ParseRuleSelection applies a -rules / config `rules` token list to base
// (nil = every rule enabled) and returns a map with every rule ID.
//
// Tokens: "all", "none", "MCP001" or "+MCP001" (enable), "-MCP011" (disable),
// case-insensitive, evaluated left to right. A list that starts with a bare
// rule ID selects only the listed rules ("MCP001,MCP002"); a list that starts
// with "+ID" or "-ID" modifies base ("-MCP011" = everything in base except
// MCP011). MCP000 (suppression directives) cannot be disabled.
func ParseRuleSelection(tokens []string, base map[string]bool) (map[string]bool, error) {
	en := map[string]bool{}
	for _, r := range rules.All() {
		en[r.ID] = base == nil || base[r.ID] || !hasKey(base, r.ID)
	}
	if len(tokens) > 0 {
		first := tokens[0]
		if !strings.HasPrefix(first, "-") && !strings.HasPrefix(first, "+") && !strings.EqualFold(first, "all") && !strings.EqualFold(first, "none") {
			for id := range en {
				en[id] = false
			}
		}
	}
	for _, tok := range tokens {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		on := true
		switch tok[0] {
		case '-':
			on, tok = false, tok[1:]
		case '+':
			tok = tok[1:]
		}
		id := strings.ToUpper(tok)
		switch id {
		case "ALL", "NONE":
			for k := range en {
				en[k] = on == (id == "ALL")
			}
			continue
		case rules.DirectiveID:
			if !on {
				return nil, fmt.Errorf("rules: %s (suppression directives) cannot be disabled", rules.DirectiveID)
			}
			continue
		}
		if _, ok := en[id]; !ok {
			return nil, fmt.Errorf("rules: unknown rule %q (known: %s)", tok, strings.Join(ruleIDs(), ", "))
		}
		en[id] = on
	}
	return en, nil
}

func hasKey(m map[string]bool, k string) bool {
	_, ok := m[k]
	return ok
}

func ruleIDs() []string {
	var ids []string
	for _, r := range rules.All() {
		ids = append(ids, r.ID)
	}
	return ids
}

// ParseSeverities parses "MCP003=warning,MCP011=info".
func ParseSeverities(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range splitList(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("severity %q: want RULE=error|warning|info", kv)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// Overrides are command-line settings that win over the config file. Nil
// pointers and empty strings mean "not given".
type Overrides struct {
	Rules       string
	Severity    string
	Target      string
	FailOn      string
	FixTags     *bool
	FixLiterals *bool
	Tests       *bool
}

// Resolve merges the defaults, cfg (may be nil) and the overrides, and
// validates the result.
func Resolve(cfg *Config, o Overrides) (*Resolved, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	s := Default()
	r := &Resolved{Severity: map[string]rules.Severity{}, Tests: true, ConfigPath: cfg.Path}

	// Library families: a listed family replaces its default prefix list.
	for fam, prefixes := range cfg.Libraries {
		s.Libraries[fam] = slices.Clone(prefixes)
	}
	if len(cfg.MethodCallFuncs) > 0 {
		// Extends the catalogue list: the defaults stay (remove-only is not useful).
		s.MethodCallFuncs = append(s.MethodCallFuncs, cfg.MethodCallFuncs...)
		slices.Sort(s.MethodCallFuncs)
		s.MethodCallFuncs = slices.Compact(s.MethodCallFuncs)
	}
	if cfg.Target != "" {
		s.Target = cfg.Target
	}
	if o.Target != "" {
		s.Target = o.Target
	}

	en, err := ParseRuleSelection(cfg.Rules, nil)
	if err != nil {
		return nil, fmt.Errorf("config rules: %w", err)
	}
	if o.Rules != "" {
		if en, err = ParseRuleSelection(splitList(o.Rules), en); err != nil {
			return nil, fmt.Errorf("-rules: %w", err)
		}
	}
	s.Enabled = en

	sev := maps.Clone(cfg.Severity)
	if sev == nil {
		sev = map[string]string{}
	}
	if o.Severity != "" {
		flagSev, err := ParseSeverities(o.Severity)
		if err != nil {
			return nil, fmt.Errorf("-severity: %w", err)
		}
		maps.Copy(sev, flagSev)
	}
	for id, level := range sev {
		uid := strings.ToUpper(id)
		if _, ok := rules.Lookup(uid); !ok {
			return nil, fmt.Errorf("severity: unknown rule %q", id)
		}
		if !rules.Severity(level).Valid() {
			return nil, fmt.Errorf("severity.%s: %q is not error, warning or info", id, level)
		}
		r.Severity[uid] = rules.Severity(level)
	}

	if cfg.Fix.Tags != nil {
		s.FixTags = *cfg.Fix.Tags
	}
	if cfg.Fix.Literals != nil {
		s.FixLiterals = *cfg.Fix.Literals
	}
	if o.FixTags != nil {
		s.FixTags = *o.FixTags
	}
	if o.FixLiterals != nil {
		s.FixLiterals = *o.FixLiterals
	}

	failOn := cfg.FailOn
	if o.FailOn != "" {
		failOn = o.FailOn
	}
	if failOn != "" && !rules.Severity(failOn).Valid() {
		return nil, fmt.Errorf("fail-on %q: want error, warning or info", failOn)
	}
	r.FailOn = rules.Severity(failOn)

	if cfg.Tests != nil {
		r.Tests = *cfg.Tests
	}
	if o.Tests != nil {
		r.Tests = *o.Tests
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r.Settings = s
	return r, nil
}

// SeverityFor returns the effective severity of a finding of rule id whose
// analyzer-assigned severity is got. A configured override replaces the
// rule's default; a severity the analyzer adjusted from the default for
// context (dual-mode server code, a compliant rejection) is kept.
func (r *Resolved) SeverityFor(id string, got rules.Severity) rules.Severity {
	over, ok := r.Severity[id]
	if !ok {
		return got
	}
	if rule, known := rules.Lookup(id); known && got != rule.Severity {
		return got
	}
	return over
}
