package driver

import (
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck"
)

// PrefixedAnalyzers returns the migratecheck analyzers wrapped so that every
// diagnostic message starts with its rule ID ("MCP001: …"). Drivers that
// print only the message (go vet -vettool via unitchecker, golangci-lint)
// then show the same "file:line:col: MCP001: message" as the standalone
// driver. The wrappers keep the analyzers' names and flags, so
// -migratecheck.* flags still work.
func PrefixedAnalyzers() []*analysis.Analyzer {
	var out []*analysis.Analyzer
	for _, a := range migratecheck.Analyzers() {
		w := *a // shares Flags values, Requires, FactTypes
		run := a.Run
		w.Run = func(pass *analysis.Pass) (any, error) {
			report := pass.Report
			p := *pass
			p.Report = func(d analysis.Diagnostic) {
				if d.Category != "" && !strings.HasPrefix(d.Message, d.Category+":") {
					d.Message = d.Category + ": " + d.Message
				}
				report(d)
			}
			return run(&p)
		}
		out = append(out, &w)
	}
	return out
}
