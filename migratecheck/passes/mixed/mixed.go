package mixed

import (
	"go/ast"
	"go/token"
	"reflect"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/edge"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/capabilities"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/libapi"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/nestedresult"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/rawmethods"
)

// Analyzer implements R8; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "mixed",
	Doc:        "find extension advertisements next to a legacy task engine",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, capabilities.Analyzer, libapi.Analyzer, rawmethods.Analyzer, nestedresult.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*finding.Result](),
}

const maxRelated = 5

func run(pass *analysis.Pass) (any, error) {
	res := &finding.Result{}
	caps := pass.ResultOf[capabilities.Analyzer].(*capabilities.Result)
	lib := pass.ResultOf[libapi.Analyzer].(*libapi.Result)
	if len(caps.Adverts) == 0 || lib.Features.Modern {
		return res, nil
	}
	type evidence struct {
		pos  token.Pos
		what string
	}
	var ev []evidence
	for _, u := range lib.Engine {
		ev = append(ev, evidence{u.Pos, u.Name + " (legacy task engine)"})
	}
	for _, h := range pass.ResultOf[rawmethods.Analyzer].(*rawmethods.Result).Hits {
		if h.Side == finding.SideServer {
			ev = append(ev, evidence{h.Pos, `"` + h.Method + `" served or emitted here`})
		}
	}
	for _, f := range pass.ResultOf[nestedresult.Analyzer].(*finding.Result).Findings {
		ev = append(ev, evidence{f.Pos, "nested CreateTaskResult {task: …}"})
	}
	if len(ev) == 0 || implementsExtension(pass) {
		return res, nil
	}
	var related []analysis.RelatedInformation
	for i, e := range ev {
		if i == maxRelated {
			break
		}
		related = append(related, analysis.RelatedInformation{Pos: e.pos, Message: e.what})
	}
	for _, a := range caps.Adverts {
		res.Add(finding.Finding{Pos: a.Pos, End: a.End, Rule: "MCP014", Key: "R8", Related: related,
			Message: `this package advertises "` + capabilities.ExtensionID + `" but its task engine is the 2025-11-25 one (` + ev[0].what +
				`): peers will expect resultType "task", ttlMs, tasks/update and tasks/get with inlined results; advertise the extension only from an engine that implements it`})
	}
	return res, nil
}

// implementsExtension reports whether the package itself shows a modern task
// engine next to the legacy one (a dual stack, which SEP-2663's
// compatibility table allows): it uses the extension-only method
// "tasks/update", or builds a result with resultType "task".
func implementsExtension(pass *analysis.Pass) bool {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	for cur := range ins.Root().Preorder((*ast.BasicLit)(nil), (*ast.Ident)(nil), (*ast.SelectorExpr)(nil), (*ast.KeyValueExpr)(nil)) {
		if k, _ := cur.ParentEdge(); k == edge.SelectorExpr_Sel {
			continue
		}
		if kv, ok := cur.Node().(*ast.KeyValueExpr); ok {
			k, kok := astq.StringValue(pass.TypesInfo, kv.Key)
			v, vok := astq.StringValue(pass.TypesInfo, kv.Value)
			if kok && vok && k == "resultType" && v == "task" {
				return true
			}
			continue
		}
		if v, ok := astq.StringValue(pass.TypesInfo, cur.Node().(ast.Expr)); ok && v == "tasks/update" {
			return true
		}
	}
	return false
}
