package migratecheck

import "golang.org/x/tools/go/analysis"

// subAnalyzers produce *finding.Result values that the root analyzer reports.
var subAnalyzers = []*analysis.Analyzer{}
