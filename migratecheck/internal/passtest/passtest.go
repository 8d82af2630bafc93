// Package passtest lets each migrate-check pass be tested on its own with
// analysistest. The passes never report: they return candidate findings
// (finding.Source) that only the root analyzer reports, after rule
// enablement, the dual-target severity policy, fix opt-in and suppression.
// Findings wraps a pass in an analyzer that reports every candidate as is,
// so a pass's test pins what the pass itself finds (positives, silent traps
// and the fixes it offers) independently of that policy. Testdata builds the
// analysistest tree of a pass's test from the one shared copy of the library
// stubs and the pass's own test packages.
package passtest

import (
	"cmp"
	"fmt"
	"go/token"
	"slices"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
)

// Findings returns an analyzer that runs a and reports each of its findings
// as "RULE: message" (category RULE) with the finding's fix attached, in
// position order and without duplicates, like the root analyzer. more, if
// given, reports what a result holds besides findings (see Note).
func Findings(a *analysis.Analyzer, more ...func(pass *analysis.Pass, result any)) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     a.Name + "findings",
		Doc:      "report the candidate findings of the " + a.Name + " pass (tests only)",
		Requires: []*analysis.Analyzer{a},
		Run: func(pass *analysis.Pass) (any, error) {
			res := pass.ResultOf[a]
			if src, ok := res.(finding.Source); ok && src != nil {
				report(pass, src.All())
			}
			for _, f := range more {
				f(pass, res)
			}
			return nil, nil
		},
	}
}

func report(pass *analysis.Pass, all []finding.Finding) {
	all = slices.Clone(all)
	slices.SortStableFunc(all, func(a, b finding.Finding) int {
		return cmp.Or(cmp.Compare(a.Pos, b.Pos), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
	all = slices.CompactFunc(all, func(a, b finding.Finding) bool {
		return a.Pos == b.Pos && a.Rule == b.Rule && a.Message == b.Message
	})
	for _, f := range all {
		d := analysis.Diagnostic{Pos: f.Pos, End: f.End, Category: f.Rule, Message: f.Rule + ": " + f.Message, Related: f.Related}
		if f.Fix != nil {
			d.SuggestedFixes = []analysis.SuggestedFix{*f.Fix}
		}
		pass.Report(d)
	}
}

// Note reports a test-only observation (what a pass recorded besides
// findings, such as an era branch or a capability advertisement) at pos, as
// "note: text".
func Note(pass *analysis.Pass, pos token.Pos, format string, args ...any) {
	pass.Report(analysis.Diagnostic{Pos: pos, Category: "note", Message: "note: " + fmt.Sprintf(format, args...)})
}
