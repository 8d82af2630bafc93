package migratecheck

import (
	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck/passes/capabilities"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/era"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/inputrequired"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/libapi"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/metakeys"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/mixed"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/nestedresult"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/rawkeys"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/rawmethods"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/taskparams"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/tasksupport"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/tasktags"
)

// subAnalyzers produce finding.Source results that the root analyzer reports.
var subAnalyzers = []*analysis.Analyzer{
	libapi.Analyzer,
	rawmethods.Analyzer,
	tasktags.Analyzer,
	nestedresult.Analyzer,
	capabilities.Analyzer,
	taskparams.Analyzer,
	tasksupport.Analyzer,
	metakeys.Analyzer,
	rawkeys.Analyzer,
	inputrequired.Analyzer,
	mixed.Analyzer,
	era.Analyzer,
}
