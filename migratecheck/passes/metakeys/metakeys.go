package metakeys

//migrate-check:file-ignore MCP011 this file is R7 itself: Keys is the table of legacy _meta keys

import (
	"go/ast"
	"go/types"
	"reflect"
	"strconv"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/edge"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/catalog"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/libs"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/reexport"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Analyzer implements R7; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "metakeys",
	Doc:        "find legacy MCP task _meta keys used as map keys",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, reexport.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*finding.Result](),
}

// Keys are the legacy _meta keys.
var Keys = map[string]bool{
	"io.modelcontextprotocol/related-task":             true,
	"io.modelcontextprotocol/model-immediate-response": true,
}

func run(pass *analysis.Pass) (any, error) {
	cfg := settings.Current()
	res := &finding.Result{}
	info := pass.TypesInfo
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	reex := pass.ResultOf[reexport.Analyzer].(*reexport.Result)
	var k libs.Keyer
	for cur := range ins.Root().Preorder((*ast.Field)(nil)) {
		// A _meta struct with the key as a json tag: RelatedTask *T `json:"io.modelcontextprotocol/related-task"`.
		f := cur.Node().(*ast.Field)
		if name := astq.FieldJSONName(f); Keys[name] {
			res.Add(finding.Finding{Pos: f.Tag.Pos(), End: f.Tag.End(), Rule: "MCP011", Key: "R7/tag",
				Message: `_meta key ` + strconv.Quote(name) + ` (a json tag) is absent from the extension and the 2026-07-28 schema: drop it or keep it only on 2025-11-25 paths`})
		}
	}
	for cur := range ins.Root().Preorder((*ast.BasicLit)(nil), (*ast.Ident)(nil), (*ast.SelectorExpr)(nil)) {
		e := cur.Node().(ast.Expr)
		if k, _ := cur.ParentEdge(); k == edge.SelectorExpr_Sel {
			continue
		}
		v, ok := astq.StringValue(info, e)
		if !ok || !Keys[v] {
			continue
		}
		if obj := astq.ObjectOf(info, e); obj != nil && obj.Pkg() != nil && obj.Pkg() != pass.Pkg {
			if _, wrapped := reex.Objects[obj]; wrapped {
				continue // reported by passes/libapi
			}
			if _, ok := catalog.Resolve(cfg, &k, obj); ok {
				continue // reported by passes/libapi
			}
		}
		if !mapKey(info, cur) {
			continue
		}
		res.Add(finding.Finding{Pos: e.Pos(), End: e.End(), Rule: "MCP011", Key: "R7",
			Message: `_meta key ` + strconv.Quote(v) + ` is absent from the extension and the 2026-07-28 schema: drop it or keep it only on 2025-11-25 paths`})
	}
	return res, nil
}

// mapKey: the expression at cur (through parens and conversions) is a map
// literal key or the index of a map index expression.
func mapKey(info *types.Info, cur inspector.Cursor) bool {
	cur = astq.Outermost(info, cur)
	switch k, _ := cur.ParentEdge(); k {
	case edge.KeyValueExpr_Key:
		return astq.MapLiteralKey(info, cur)
	case edge.IndexExpr_Index:
		return astq.IsMap(info, cur.Parent().Node().(*ast.IndexExpr).X)
	}
	return false
}
