package nestedresult

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/edge"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/modscan"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/rawmethods"
)

// Analyzer implements R3; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "nestedresult",
	Doc:        "find nested CreateTaskResult {task: Task} shapes",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, rawmethods.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*finding.Result](),
}

const do = `the extension's CreateTaskResult is flat: the Task fields merged into the result, discriminated by resultType "task"`

func run(pass *analysis.Pass) (any, error) {
	res := &finding.Result{}
	info := pass.TypesInfo
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	raw := pass.ResultOf[rawmethods.Analyzer].(*rawmethods.Result)
	// A storage layer that persists the task it (or another package)
	// sends nests it in its own envelopes and documents: those are not
	// results. The wire type itself is reported where it is declared, so
	// the store stays silent unless it speaks JSON-RPC task methods or
	// another package sends its envelope to 2025-11-25 peers.
	store := astq.StoragePackage(pass.Pkg) && len(raw.Hits) == 0 && raw.ServesLegacy() == ""
	guard := modscan.NewGuard()

	for cur := range ins.Root().Preorder((*ast.StructType)(nil), (*ast.CompositeLit)(nil)) {
		switch n := cur.Node().(type) {
		case *ast.StructType:
			st, ok := info.TypeOf(n).(*types.Struct)
			if !ok {
				continue
			}
			if astq.StorageRecord(n) {
				continue // a storage record (TaskRecord with dynamodbav/db tags) is not a wire result
			}
			// Only for a candidate: the guard reads the module's files.
			quiet := func() bool { return store && guard.Why(pass, cur) == "" }
			keys := astq.JSONKeys(st)
			for _, f := range n.Fields.List {
				if astq.FieldJSONName(f) != "task" {
					continue
				}
				ft := info.TypeOf(f.Type)
				switch {
				case (taskShapedType(ft) || taskStatusType(ft)) && !quiet():
					res.Add(finding.Finding{Pos: fpos(f), End: fend(f), Rule: "MCP008", Side: finding.SideServer, Key: "R3/struct",
						Message: astq.StructName(cur) + ` nests a task-shaped value under json "task" (the 2025-11-25 CreateTaskResult): ` + do})
				case keys["content"] && opaque(ft) && !quiet():
					res.Add(finding.Finding{Pos: fpos(f), End: fend(f), Rule: "MCP008", Side: finding.SideClient, Key: "R3/probe",
						Message: astq.StructName(cur) + ` probes a tools/call result for a nested "task" key (the 2025-11-25 CreateTaskResult): ` + do + `; check resultType == "task" instead`})
				}
			}
		case *ast.CompositeLit:
			kv := astq.MapKeys(info, n)["task"]
			if store || kv == nil || !taskShapedExpr(info, kv.Value) || !storedAsResult(info, cur) {
				continue
			}
			res.Add(finding.Finding{Pos: kv.Pos(), End: kv.End(), Rule: "MCP008", Side: finding.SideServer, Key: "R3/map",
				Message: `this result nests the task under "task" (the 2025-11-25 CreateTaskResult): ` + do})
		}
	}
	return res, nil
}

// taskStatusType: a struct whose JSON keys are exactly taskId and status,
// the minimal shape a client decodes {"task": {"taskId", "status"}} into.
func taskStatusType(t types.Type) bool {
	st := astq.StructOf(t)
	if st == nil {
		return false
	}
	keys := astq.JSONKeys(st)
	return len(keys) == 2 && keys["taskId"] && keys["status"]
}

func taskShapedType(t types.Type) bool {
	st := astq.StructOf(t)
	return st != nil && astq.TaskShaped(astq.JSONKeys(st))
}

// opaque: a RawMessage (a named []byte type of that name, as in
// encoding/json and its drop-in replacements), an interface (any) or a map.
func opaque(t types.Type) bool {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	if n, ok := t.(*types.Named); ok && n.Obj().Name() == "RawMessage" {
		if sl, ok := n.Underlying().(*types.Slice); ok && types.Identical(sl.Elem(), types.Typ[types.Byte]) {
			return true
		}
	}
	switch astq.Under(t).(type) {
	case *types.Interface, *types.Map:
		return true
	}
	return false
}

// taskShapedExpr: a value of task-shaped struct type, or a map literal with
// taskId and status keys.
func taskShapedExpr(info *types.Info, e ast.Expr) bool {
	if lit := astq.MapLit(info, e); lit != nil {
		keys := astq.MapKeys(info, lit)
		return keys["taskId"] != nil && keys["status"] != nil
	}
	return taskShapedType(info.TypeOf(e))
}

// storedAsResult: the literal is returned, or stored under a "result" map
// key, a Result field, or a variable named result.
func storedAsResult(info *types.Info, cur inspector.Cursor) bool {
	for {
		k, _ := cur.ParentEdge()
		if k == edge.ParenExpr_X || k == edge.UnaryExpr_X {
			cur = cur.Parent()
			continue
		}
		break
	}
	k, idx := cur.ParentEdge()
	switch k {
	case edge.ReturnStmt_Results:
		return true
	case edge.KeyValueExpr_Value:
		kv := cur.Parent().Node().(*ast.KeyValueExpr)
		if s, ok := astq.StringValue(info, kv.Key); ok {
			return s == "result"
		}
		return strings.EqualFold(astq.NameOf(kv.Key), "result")
	case edge.AssignStmt_Rhs:
		as := cur.Parent().Node().(*ast.AssignStmt)
		if len(as.Lhs) != len(as.Rhs) {
			return false
		}
		switch l := as.Lhs[idx].(type) {
		case *ast.IndexExpr:
			s, ok := astq.StringValue(info, l.Index)
			return ok && s == "result"
		default:
			return strings.EqualFold(astq.NameOf(l), "result")
		}
	}
	return false
}

func fpos(f *ast.Field) token.Pos { p, _ := astq.FieldPos(f); return p }
func fend(f *ast.Field) token.Pos { _, e := astq.FieldPos(f); return e }
