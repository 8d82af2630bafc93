package driver

import (
	"fmt"
	"strings"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
)

// Markers around the generated parts of docs/rules/*.md. The text between
// them is rendered from the rules catalogue so the pages cannot drift from
// rules.All() (TestRuleDocs checks; -update rewrites).
const (
	MetaBegin  = "<!-- BEGIN rule-meta: generated from migratecheck/rules; go test ./migratecheck/driver -run TestRuleDocs -update -->"
	MetaEnd    = "<!-- END rule-meta -->"
	IndexBegin = "<!-- BEGIN rule-index: generated from migratecheck/rules; go test ./migratecheck/driver -run TestRuleDocs -update -->"
	IndexEnd   = "<!-- END rule-index -->"
)

// fixConfigKey maps a rule's FixFlag to its .migrate-check.yaml key.
func fixConfigKey(flag string) string {
	return "fix: {" + strings.TrimPrefix(flag, "fix-") + ": true}"
}

// FixPolicy renders a rule's fix policy for humans.
func FixPolicy(r rules.Rule) string {
	if r.Fix == rules.FixOptIn {
		return fmt.Sprintf("opt-in: `-%s` (config `%s`)", r.FixFlag, fixConfigKey(r.FixFlag))
	}
	return "none (guidance only)"
}

// RuleMeta renders the generated metadata table of a rule page.
func RuleMeta(r rules.Rule) string {
	var b strings.Builder
	b.WriteString(MetaBegin + "\n\n")
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| Rule | `%s` (`%s`) |\n", r.ID, r.Name)
	fmt.Fprintf(&b, "| In short | %s |\n", mdCell(r.Title))
	fmt.Fprintf(&b, "| Default severity | %s |\n", r.Severity)
	fmt.Fprintf(&b, "| Automatic fix | %s |\n", FixPolicy(r))
	var links []string
	for _, s := range strings.Split(r.Spec, ";") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if strings.HasPrefix(s, "http") {
			links = append(links, fmt.Sprintf("[%s](%s)", specLabel(s), s))
		} else {
			links = append(links, mdCell(s))
		}
	}
	fmt.Fprintf(&b, "| Spec | %s |\n", strings.Join(links, "<br>"))
	fmt.Fprintf(&b, "| Explain | `migrate-check -explain %s` |\n", r.ID)
	b.WriteString("\n" + MetaEnd)
	return b.String()
}

// RuleIndex renders the generated rule table of docs/rules/README.md.
func RuleIndex() string {
	var b strings.Builder
	b.WriteString(IndexBegin + "\n\n")
	b.WriteString("| Rule | Name | Default severity | Automatic fix | In short |\n|---|---|---|---|---|\n")
	for _, r := range catalogue() {
		fix := "none"
		if r.Fix == rules.FixOptIn {
			fix = "opt-in `-" + r.FixFlag + "`"
		}
		fmt.Fprintf(&b, "| [%s](%s.md) | `%s` | %s | %s | %s |\n", r.ID, r.ID, r.Name, r.Severity, fix, mdCell(r.Title))
	}
	b.WriteString("\n" + IndexEnd)
	return b.String()
}

func specLabel(u string) string {
	switch {
	case strings.Contains(u, "seps/2663"):
		return "SEP-2663"
	case strings.Contains(u, "ext-tasks"):
		label := "ext-tasks spec"
		if _, frag, ok := strings.Cut(u, "#"); ok {
			label += " §" + frag
		}
		return label
	case strings.Contains(u, "2025-11-25"):
		return "2025-11-25 tasks (legacy)"
	case strings.Contains(u, "changelog"):
		return "2026-07-28 changelog"
	}
	return u
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// ReplaceBlock replaces the text from begin to end (inclusive) in doc with
// block, or returns ok=false when the markers are missing.
func ReplaceBlock(doc, begin, end, block string) (string, bool) {
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return doc, false
	}
	return doc[:i] + block + doc[j+len(end):], true
}
