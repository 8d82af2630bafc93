package taskparams

import (
	"go/ast"
	"go/types"
	"reflect"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
)

// Analyzer implements R5; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "taskparams",
	Doc:        "find the removed per-request params.task",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*finding.Result](),
}

const (
	msg005 = `params "task" on tools/call is the removed 2025-11-25 task augmentation: servers must ignore it; the server decides per request and the client only declares the extension`
)

// kind classifies a key set: "tools/call", "sampling/createMessage",
// "elicitation/create" or "".
func kind(has func(string) bool) string {
	switch {
	case has("name") && has("arguments"):
		return "tools/call"
	case has("messages") && has("maxTokens"):
		return "sampling/createMessage"
	case has("message") && has("requestedSchema"):
		return "elicitation/create"
	}
	return ""
}

func run(pass *analysis.Pass) (any, error) {
	res := &finding.Result{}
	info := pass.TypesInfo
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	report := func(n ast.Node, k string, key string) {
		if k == "tools/call" {
			res.Add(finding.Finding{Pos: n.Pos(), End: n.End(), Rule: "MCP005", Side: finding.SideClient, Key: key, Message: msg005})
			return
		}
		res.Add(finding.Finding{Pos: n.Pos(), End: n.End(), Rule: "MCP013", Side: finding.SideServer, Key: key,
			Message: `params "task" on ` + k + ` asks the client to host a task, which the extension removed (SEP-2260 forbids unsolicited server-to-client requests)`})
	}

	for cur := range ins.Root().Preorder((*ast.CompositeLit)(nil), (*ast.StructType)(nil), (*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		switch n := cur.Node().(type) {
		case *ast.CompositeLit:
			keys := astq.MapKeys(info, n)
			if kv := keys["task"]; kv != nil {
				if k := kind(func(s string) bool { return keys[s] != nil }); k != "" {
					report(kv.Key, k, "R5/map")
				}
			}
		case *ast.StructType:
			st, ok := info.TypeOf(n).(*types.Struct)
			if !ok {
				continue
			}
			keys := astq.JSONKeys(st)
			if !keys["task"] {
				continue
			}
			k := kind(func(s string) bool { return keys[s] })
			if k == "" {
				continue
			}
			for _, f := range n.Fields.List {
				if astq.FieldJSONName(f) == "task" {
					report(f.Tag, k, "R5/struct")
				}
			}
		case *ast.FuncDecl:
			if n.Body != nil {
				indexAssignments(info, n.Body, report)
			}
		case *ast.FuncLit:
			indexAssignments(info, n.Body, report)
		}
	}
	return res, nil
}

// indexAssignments finds params["task"] = … in one function body (not
// descending into nested function literals, which are visited on their own)
// and reports it when the same map variable also gets tools/call (or
// sampling/elicitation) keys in that function.
func indexAssignments(info *types.Info, body *ast.BlockStmt, report func(ast.Node, string, string)) {
	keysOf := map[types.Object]map[string]bool{}
	var taskAssigns []struct {
		obj types.Object
		key ast.Expr
	}
	add := func(obj types.Object, k string) {
		if keysOf[obj] == nil {
			keysOf[obj] = map[string]bool{}
		}
		keysOf[obj][k] = true
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			for i, l := range s.Lhs {
				if ix, ok := ast.Unparen(l).(*ast.IndexExpr); ok {
					obj := astq.ObjectOf(info, ast.Unparen(ix.X))
					k, ok := astq.StringValue(info, ix.Index)
					if obj == nil || !ok {
						continue
					}
					add(obj, k)
					if k == "task" {
						taskAssigns = append(taskAssigns, struct {
							obj types.Object
							key ast.Expr
						}{obj, ix.Index})
					}
					continue
				}
				// m := map[string]any{...}
				if len(s.Lhs) == len(s.Rhs) {
					if id, ok := l.(*ast.Ident); ok {
						obj := info.Defs[id]
						if obj == nil {
							obj = info.Uses[id]
						}
						if lit := astq.MapLit(info, s.Rhs[i]); lit != nil && obj != nil {
							for k := range astq.MapKeys(info, lit) {
								add(obj, k)
							}
						}
					}
				}
			}
		case *ast.ValueSpec:
			if len(s.Names) == len(s.Values) {
				for i, id := range s.Names {
					if lit := astq.MapLit(info, s.Values[i]); lit != nil && info.Defs[id] != nil {
						for k := range astq.MapKeys(info, lit) {
							add(info.Defs[id], k)
						}
					}
				}
			}
		}
		return true
	})
	for _, ta := range taskAssigns {
		keys := keysOf[ta.obj]
		if k := kind(func(s string) bool { return keys[s] }); k != "" {
			report(ta.key, k, "R5/index")
		} else if keys["name"] || keys["arguments"] {
			report(ta.key, "tools/call", "R5/index")
		}
	}
}
