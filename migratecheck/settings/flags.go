package settings

// The analyzers' effective configuration lives behind the flags of the root
// "migratecheck" analyzer. The flags are the single source of truth so that
// multichecker, unitchecker (go vet -vettool) and custom drivers all
// configure the analyzers the same way; the sub-analyzers read a Snapshot
// with Current.

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
)

// Snapshot is an immutable snapshot of the configuration.
type Snapshot struct {
	Libraries       map[string][]string // every family present; empty = disabled
	MethodCallFuncs []string
	Target          string          // TargetDual or TargetExtensionOnly
	Enabled         map[string]bool // every rule ID MCP001…MCP015
	FixTags         bool
	FixLiterals     bool
}

// RuleEnabled reports whether rule id is on. MCP000 is always on.
func (c *Snapshot) RuleEnabled(id string) bool {
	if id == rules.DirectiveID {
		return true
	}
	on, ok := c.Enabled[id]
	return !ok || on
}

// Dual reports whether 2025-11-25 peers must still be served.
func (c *Snapshot) Dual() bool { return c.Target != TargetExtensionOnly }

// IsMethodCallFunc reports whether name is in MethodCallFuncs (with trailing
// "*" wildcards), ignoring case: unexported helpers such as call or
// sendRequest take the method name just like Call and SendRequest do.
func (c *Snapshot) IsMethodCallFunc(name string) bool {
	for _, f := range c.MethodCallFuncs {
		if p, ok := strings.CutSuffix(f, "*"); ok {
			if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
				return true
			}
		} else if strings.EqualFold(f, name) {
			return true
		}
	}
	return false
}

var (
	mu  sync.RWMutex
	cur = SnapshotOf(Default())
)

// Current returns the configuration in effect.
func Current() *Snapshot {
	mu.RLock()
	defer mu.RUnlock()
	return cur
}

func update(f func(c *Snapshot)) {
	mu.Lock()
	defer mu.Unlock()
	next := *cur
	next.Libraries = maps.Clone(cur.Libraries)
	next.Enabled = maps.Clone(cur.Enabled)
	next.MethodCallFuncs = slices.Clone(cur.MethodCallFuncs)
	f(&next)
	cur = &next
}

// SnapshotOf converts settings (assumed valid) into a snapshot, filling
// absent families from the defaults.
func SnapshotOf(s Settings) *Snapshot {
	c := &Snapshot{
		Libraries:       DefaultLibraries(),
		MethodCallFuncs: slices.Clone(s.MethodCallFuncs),
		Target:          s.Target,
		Enabled:         map[string]bool{},
		FixTags:         s.FixTags,
		FixLiterals:     s.FixLiterals,
	}
	for fam, p := range s.Libraries {
		c.Libraries[fam] = slices.Clone(p)
	}
	if c.MethodCallFuncs == nil {
		c.MethodCallFuncs = DefaultMethodCallFuncs()
	}
	if c.Target == "" {
		c.Target = TargetDual
	}
	for _, r := range rules.All() {
		c.Enabled[r.ID] = s.RuleEnabled(r.ID)
	}
	return c
}

// Flag names on the root analyzer (documented in migratecheck's doc.go).
const (
	FlagLibraries       = "libraries"
	FlagMethodCallFuncs = "method-call-funcs"
	FlagTarget          = "target"
	FlagRules           = "rules"
	FlagFixTags         = "fix-tags"
	FlagFixLiterals     = "fix-literals"
)

// RegisterFlags adds the configuration flags to fs (the root analyzer's FlagSet).
func RegisterFlags(fs *flag.FlagSet) {
	fs.Var(librariesValue{}, FlagLibraries,
		"library path prefixes as comma-separated family=prefix pairs (families: "+strings.Join(Families(), ", ")+
			"); a family listed with an empty prefix (\"mcpkit=\") is disabled, unlisted families keep their defaults")
	fs.Var(callFuncsValue{}, FlagMethodCallFuncs,
		"comma-separated names of functions whose first string argument is a JSON-RPC method name (trailing * = prefix match)")
	fs.Var(targetValue{}, FlagTarget,
		"\"dual\" (still serve 2025-11-25 peers: server-side MCP004/MCP005 are info) or \"extension-only\"")
	fs.Var(rulesValue{}, FlagRules,
		"rules to run: comma-separated, e.g. \"all,-MCP011\" or \"MCP001,MCP002\"; MCP000 always runs")
	fs.Var(boolValue{get: func(c *Snapshot) bool { return c.FixTags }, set: func(c *Snapshot, v bool) { c.FixTags = v }},
		FlagFixTags, "attach the opt-in MCP006/MCP007 json tag rename fixes (ttl→ttlMs, pollInterval→pollIntervalMs)")
	fs.Var(boolValue{get: func(c *Snapshot) bool { return c.FixLiterals }, set: func(c *Snapshot, v bool) { c.FixLiterals = v }},
		FlagFixLiterals, "attach the opt-in MCP003 fix renaming the literal \"notifications/tasks/status\" to \"notifications/tasks\"")
}

type librariesValue struct{}

func (librariesValue) String() string { return EncodeLibraries(Current().Libraries) }

func (librariesValue) Set(s string) error {
	libs, err := ParseLibraries(s)
	if err != nil {
		return err
	}
	update(func(c *Snapshot) {
		c.Libraries = DefaultLibraries()
		for fam, p := range libs {
			c.Libraries[fam] = p
		}
	})
	return nil
}

// EncodeLibraries renders a family→prefixes map in the -libraries syntax.
func EncodeLibraries(libs map[string][]string) string {
	var parts []string
	for _, fam := range slices.Sorted(maps.Keys(libs)) {
		if len(libs[fam]) == 0 {
			parts = append(parts, fam+"=")
		}
		for _, p := range libs[fam] {
			parts = append(parts, fam+"="+p)
		}
	}
	return strings.Join(parts, ",")
}

// ParseLibraries parses the -libraries syntax.
func ParseLibraries(s string) (map[string][]string, error) {
	libs := map[string][]string{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fam, prefix, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("libraries: %q is not family=prefix", part)
		}
		fam, prefix = strings.TrimSpace(fam), strings.TrimSuffix(strings.TrimSpace(prefix), "/")
		if !slices.Contains(Families(), fam) {
			return nil, fmt.Errorf("libraries: unknown family %q (known: %s)", fam, strings.Join(Families(), ", "))
		}
		if _, seen := libs[fam]; !seen {
			libs[fam] = []string{}
		}
		if prefix != "" && !slices.Contains(libs[fam], prefix) {
			libs[fam] = append(libs[fam], prefix)
		}
	}
	return libs, nil
}

type callFuncsValue struct{}

func (callFuncsValue) String() string { return strings.Join(Current().MethodCallFuncs, ",") }

func (callFuncsValue) Set(s string) error {
	var names []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if n := strings.TrimSuffix(f, "*"); n == "" || strings.ContainsAny(n, " *") {
			return fmt.Errorf("method-call-funcs: invalid name %q", f)
		}
		names = append(names, f)
	}
	update(func(c *Snapshot) { c.MethodCallFuncs = names })
	return nil
}

type targetValue struct{}

func (targetValue) String() string { return Current().Target }

func (targetValue) Set(s string) error {
	switch s {
	case TargetDual, TargetExtensionOnly:
	default:
		return fmt.Errorf("target: %q: want %q or %q", s, TargetDual, TargetExtensionOnly)
	}
	update(func(c *Snapshot) { c.Target = s })
	return nil
}

type rulesValue struct{}

func (rulesValue) String() string { return EncodeRules(Current().Enabled) }

func (rulesValue) Set(s string) error {
	en, err := ParseRules(s)
	if err != nil {
		return err
	}
	update(func(c *Snapshot) { c.Enabled = en })
	return nil
}

// EncodeRules renders an enablement map in the -rules syntax ("all",
// "all,-MCP011", …). Absent IDs count as enabled.
func EncodeRules(enabled map[string]bool) string {
	parts := []string{"all"}
	for _, r := range rules.All() {
		if on, ok := enabled[r.ID]; ok && !on {
			parts = append(parts, "-"+r.ID)
		}
	}
	return strings.Join(parts, ",")
}

// ParseRules parses the -rules syntax into a map with every rule ID. A list
// that starts with a positive rule ID enables only the listed rules; one that
// starts with "all" or a negation starts from everything enabled.
func ParseRules(s string) (map[string]bool, error) {
	var toks []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			toks = append(toks, t)
		}
	}
	base := len(toks) == 0 || strings.EqualFold(toks[0], "all") || strings.HasPrefix(toks[0], "-")
	en := map[string]bool{}
	for _, r := range rules.All() {
		en[r.ID] = base
	}
	for _, t := range toks {
		neg := strings.HasPrefix(t, "-")
		id := strings.ToUpper(strings.TrimPrefix(t, "-"))
		if id == "ALL" {
			for k := range en {
				en[k] = !neg
			}
			continue
		}
		if id == rules.DirectiveID {
			if neg {
				return nil, fmt.Errorf("rules: %s (suppression directives) cannot be disabled", rules.DirectiveID)
			}
			continue
		}
		if _, ok := en[id]; !ok {
			return nil, fmt.Errorf("rules: unknown rule %q", t)
		}
		en[id] = !neg
	}
	return en, nil
}

type boolValue struct {
	get func(*Snapshot) bool
	set func(*Snapshot, bool)
}

func (b boolValue) IsBoolFlag() bool { return true }

func (b boolValue) String() string {
	if b.get == nil { // zero value probed by the flag package
		return "false"
	}
	return strconv.FormatBool(b.get(Current()))
}

func (b boolValue) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("invalid boolean %q: %w", s, err)
	}
	update(func(c *Snapshot) { b.set(c, v) })
	return nil
}
