package driver

import (
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// PrefixedAnalyzers returns the migratecheck analyzers wrapped so that every
// diagnostic message starts with its rule ID ("MCP001: …"). Drivers that
// print only the message and show severity their own way (golangci-lint)
// then show the rule as the standalone driver does. The wrappers keep the
// analyzers' names and flags, so -migratecheck.* flags still work.
func PrefixedAnalyzers() []*analysis.Analyzer {
	return wrapReport(func(d analysis.Diagnostic) string {
		if d.Category == "" || strings.HasPrefix(d.Message, d.Category+":") {
			return d.Message
		}
		return d.Category + ": " + d.Message
	})
}

// VetAnalyzers returns the migratecheck analyzers wrapped for go vet
// -vettool and go fix -fixtool (unitchecker), which print only
// "file:line:col: message": the message is rewritten to
// "severity: MCP001: message", the effective severity after r's per-rule
// overrides, so the lines read exactly like the standalone text output.
func VetAnalyzers(r *settings.Resolved) []*analysis.Analyzer {
	return wrapReport(func(d analysis.Diagnostic) string {
		if d.Category == "" {
			return d.Message
		}
		sev := r.SeverityFor(d.Category, migratecheck.SeverityOf(d))
		return string(sev) + ": " + d.Category + ": " + stripMarker(d.Message)
	})
}

// wrapReport wraps every analyzer so that its diagnostics' messages are
// rewritten by msg before they are reported.
func wrapReport(msg func(analysis.Diagnostic) string) []*analysis.Analyzer {
	var out []*analysis.Analyzer
	for _, a := range migratecheck.Analyzers() {
		w := *a // shares Flags values, Requires, FactTypes
		run := a.Run
		w.Run = func(pass *analysis.Pass) (any, error) {
			report := pass.Report
			p := *pass
			p.Report = func(d analysis.Diagnostic) {
				d.Message = msg(d)
				report(d)
			}
			return run(&p)
		}
		out = append(out, &w)
	}
	return out
}
