package driver

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// catalogue returns MCP000 (directive problems) followed by MCP001…MCP014.
func catalogue() []rules.Rule {
	return append([]rules.Rule{rules.Directive()}, rules.All()...)
}

// ListRules prints one line per rule with its effective severity, fix policy
// and enablement under r (nil = defaults).
func ListRules(w io.Writer, r *settings.Resolved) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tSEVERITY\tFIX\tENABLED\tTITLE")
	for _, rule := range catalogue() {
		sev, enabled := rule.Severity, true
		if r != nil {
			if s, ok := r.Severity[rule.ID]; ok {
				sev = s
			}
			if rule.ID != rules.DirectiveID {
				enabled = r.Settings.RuleEnabled(rule.ID)
			}
		}
		fix := rule.Fix
		if rule.Fix == rules.FixOptIn {
			fix = "opt-in -" + rule.FixFlag
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", rule.ID, sev, fix, yesNo(enabled), rule.Title)
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Explain prints a rule's documentation: what changed, before/after code,
// the fix policy and the spec sections.
func Explain(w io.Writer, id string) error {
	rule, ok := rules.Lookup(strings.ToUpper(strings.TrimSpace(id)))
	if !ok {
		return fmt.Errorf("%w %q; run migrate-check -list-rules", ErrNoRule, id)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s\n\n", rule.ID, rule.Name, rule.Title)
	fmt.Fprintf(&b, "Severity: %s\n", rule.Severity)
	switch rule.Fix {
	case rules.FixOptIn:
		fmt.Fprintf(&b, "Automatic fix: opt-in, with -fix -%s (or `fix:` in .migrate-check.yaml)\n\n", rule.FixFlag)
	default:
		fmt.Fprintf(&b, "Automatic fix: none (guidance only)\n\n")
	}
	fmt.Fprintf(&b, "%s\n", wrap(rule.Summary, 100))
	if rule.Before != "" {
		fmt.Fprintf(&b, "\nBefore (2025-11-25):\n\n%s\n", indent(rule.Before))
	}
	if rule.After != "" {
		fmt.Fprintf(&b, "\nAfter (io.modelcontextprotocol/tasks):\n\n%s\n", indent(rule.After))
	}
	if rule.Spec != "" {
		fmt.Fprintf(&b, "\nSpec:\n")
		for _, s := range strings.Split(rule.Spec, ";") {
			if s = strings.TrimSpace(s); s != "" {
				fmt.Fprintf(&b, "  %s\n", s)
			}
		}
	}
	fmt.Fprintf(&b, "\nMore: %s\n", rule.HelpURI)
	_, err := io.WriteString(w, b.String())
	return err
}

func indent(code string) string {
	lines := strings.Split(strings.TrimRight(code, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}

func wrap(s string, width int) string {
	var out, line strings.Builder
	for _, word := range strings.Fields(s) {
		if line.Len() > 0 && line.Len()+1+len(word) > width {
			out.WriteString(line.String())
			out.WriteByte('\n')
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	out.WriteString(line.String())
	return out.String()
}
