package inputrequired

//migrate-check:file-ignore MCP001,MCP010 this file is MCP010 itself: it compares with "tasks/result" and "input_required"

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
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/libapi"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/rawmethods"
)

// Analyzer implements MCP010; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "inputrequired",
	Doc:        "find input_required handled through tasks/result",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, libapi.Analyzer, rawmethods.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*finding.Result](),
}

func run(pass *analysis.Pass) (any, error) {
	res := &finding.Result{}
	lib := pass.ResultOf[libapi.Analyzer].(*libapi.Result)
	raw := pass.ResultOf[rawmethods.Analyzer].(*rawmethods.Result)
	var resultUses []token.Pos
	for _, f := range lib.Findings {
		if f.Rule == "MCP001" && f.Level == "" {
			resultUses = append(resultUses, f.Pos)
		}
	}
	for _, h := range raw.Hits {
		if h.Method == "tasks/result" {
			resultUses = append(resultUses, h.Pos)
		}
	}
	if len(resultUses) == 0 {
		return res, nil
	}
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	for cur := range ins.Root().Preorder((*ast.FuncDecl)(nil)) {
		fd := cur.Node().(*ast.FuncDecl)
		if fd.Body == nil || !contains(fd, resultUses) {
			continue
		}
		for c := range cur.Preorder((*ast.BasicLit)(nil), (*ast.Ident)(nil), (*ast.SelectorExpr)(nil)) {
			if k, _ := c.ParentEdge(); k == edge.SelectorExpr_Sel {
				continue
			}
			e := c.Node().(ast.Expr)
			if v, ok := astq.StringValue(pass.TypesInfo, e); ok && v == "input_required" {
				res.Add(finding.Finding{Pos: e.Pos(), End: e.End(), Rule: "MCP010", Key: "input_required",
					Message: `input_required is handled next to the removed tasks/result: with the extension, tasks/get returns inputRequests and the client answers with tasks/update{taskId, inputResponses}, not through a tasks/result side channel`})
			}
		}
	}
	return res, nil
}

func contains(n ast.Node, ps []token.Pos) bool {
	for _, p := range ps {
		if n.Pos() <= p && p < n.End() {
			return true
		}
	}
	return false
}
