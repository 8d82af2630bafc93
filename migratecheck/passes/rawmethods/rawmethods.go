package rawmethods

//migrate-check:file-ignore MCP001,MCP002,MCP003 this file is R1 itself: it switches on and compares legacy method names

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/edge"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/config"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/libs"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/reexport"
)

// Analyzer implements R1; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "rawmethods",
	Doc:        "find removed MCP task method names in JSON-RPC method position",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, reexport.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*Result](),
}

// Legacy maps the legacy method names to their rules.
var Legacy = map[string]string{
	"tasks/result":               "MCP001",
	"tasks/list":                 "MCP002",
	"notifications/tasks/status": "MCP003",
}

// NewNotification is the extension's name for task status notifications.
const NewNotification = "notifications/tasks"

// Hit is one use of a legacy method name in method position.
type Hit struct {
	Pos    token.Pos
	Method string
	Side   finding.Side
	Func   *ast.FuncDecl // enclosing function declaration, if any
}

// Result lists the findings and every hit.
type Result struct {
	finding.Result
	Hits []Hit
}

// ServerSide reports whether the package serves a legacy method (dispatches
// tasks/result or tasks/list, or sends notifications/tasks/status).
func (r *Result) ServerSide() bool {
	for _, h := range r.Hits {
		if h.Side == finding.SideServer {
			return true
		}
	}
	return false
}

type declUse struct {
	lit  *ast.BasicLit
	name string
	hits []Hit
}

func run(pass *analysis.Pass) (any, error) {
	cfg := config.Current()
	res := &Result{}
	info := pass.TypesInfo
	reex := pass.ResultOf[reexport.Analyzer].(*reexport.Result)
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)

	// Pre-scan: local const/var declarations initialised with a legacy
	// literal, and whether the new notification name is used anywhere.
	decls := map[types.Object]*declUse{}
	hasNew := false
	for cur := range ins.Root().Preorder((*ast.BasicLit)(nil)) {
		lit := cur.Node().(*ast.BasicLit)
		if lit.Kind != token.STRING {
			continue
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			continue
		}
		if v == NewNotification {
			hasNew = true
		}
		if _, ok := Legacy[v]; !ok {
			continue
		}
		if obj, name := declaredBy(info, cur); obj != nil {
			decls[obj] = &declUse{lit: lit, name: name}
		}
	}

	isLib := func(obj types.Object) bool {
		if obj == nil || obj.Pkg() == nil {
			return false
		}
		if _, ok := reex.Objects[obj]; ok {
			return true
		}
		return libs.IsLibrary(cfg, obj.Pkg().Path())
	}

	for cur := range ins.Root().Preorder((*ast.BasicLit)(nil), (*ast.Ident)(nil), (*ast.SelectorExpr)(nil)) {
		var value string
		var obj types.Object
		switch n := cur.Node().(type) {
		case *ast.BasicLit:
			v, ok := astq.StringValue(info, n)
			if !ok {
				continue
			}
			if _, inDecl := declaredBy(info, cur); inDecl != "" {
				continue // reported through its uses
			}
			value = v
		case *ast.SelectorExpr:
			obj = info.Uses[n.Sel]
			v, ok := astq.StringValue(info, n)
			if !ok || obj == nil || isLib(obj) {
				continue
			}
			value = v
		case *ast.Ident:
			if k, _ := cur.ParentEdge(); k == edge.SelectorExpr_Sel {
				continue
			}
			obj = info.Uses[n]
			if obj == nil || isLib(obj) {
				continue
			}
			if d, ok := decls[obj]; ok {
				value, _ = strconv.Unquote(d.lit.Value)
			} else if v, ok := astq.StringValue(info, n); ok {
				value = v
			} else {
				continue
			}
		}
		rule, ok := Legacy[value]
		if !ok {
			continue
		}
		side, where, ok := classify(cfg, info, cur, value)
		if !ok {
			continue
		}
		h := Hit{Pos: cur.Node().Pos(), Method: value, Side: side, Func: enclosingFunc(cur)}
		res.Hits = append(res.Hits, h)
		if d, ok := decls[obj]; ok && obj != nil {
			d.hits = append(d.hits, h)
			continue
		}
		f := finding.Finding{Pos: cur.Node().Pos(), End: cur.Node().End(), Rule: rule, Side: side, Key: "R1",
			Message: message(value, where, side)}
		if lit, ok := cur.Node().(*ast.BasicLit); ok && rule == "MCP003" && !hasNew {
			f.Fix, f.FixKind = renameFix(lit), finding.FixLiterals
		}
		res.Add(f)
	}
	for _, d := range decls {
		if len(d.hits) == 0 {
			continue
		}
		value, _ := strconv.Unquote(d.lit.Value)
		side := d.hits[0].Side
		var related []analysis.RelatedInformation
		for _, h := range d.hits {
			if h.Side == finding.SideServer {
				side = finding.SideServer
			}
			related = append(related, analysis.RelatedInformation{Pos: h.Pos, Message: d.name + " used as a JSON-RPC method name here"})
		}
		f := finding.Finding{Pos: d.lit.Pos(), End: d.lit.End(), Rule: Legacy[value], Side: side, Key: "R1",
			Related: related,
			Message: fmt.Sprintf("%s (= %s) is used as a JSON-RPC method name %s, but %s", d.name, d.lit.Value,
				plural(len(d.hits)), guidance(value, side))}
		if Legacy[value] == "MCP003" && !hasNew {
			f.Fix, f.FixKind = renameFix(d.lit), finding.FixLiterals
		}
		res.Add(f)
	}
	return res, nil
}

func plural(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// declaredBy reports the object and name of the const/var whose initialiser
// is (exactly, up to parens and conversions) the literal at cur.
func declaredBy(info *types.Info, cur inspector.Cursor) (types.Object, string) {
	c := outer(info, cur)
	k, idx := c.ParentEdge()
	if k != edge.ValueSpec_Values {
		return nil, ""
	}
	vs := c.Parent().Node().(*ast.ValueSpec)
	if idx >= len(vs.Names) || len(vs.Values) != len(vs.Names) {
		return nil, ""
	}
	return info.Defs[vs.Names[idx]], vs.Names[idx].Name
}

// outer climbs from cur through parentheses and type conversions.
func outer(info *types.Info, cur inspector.Cursor) inspector.Cursor {
	for {
		p := cur.Parent()
		if !p.Valid() {
			return cur
		}
		switch n := p.Node().(type) {
		case *ast.ParenExpr:
			cur = p
			continue
		case *ast.CallExpr:
			if len(n.Args) == 1 && n.Args[0] == cur.Node() && info.Types[n.Fun].IsType() {
				cur = p
				continue
			}
		}
		return cur
	}
}

// classify decides whether the string constant at cur is in JSON-RPC method
// position, and which peer role that position implies.
func classify(cfg *config.Config, info *types.Info, cur inspector.Cursor, method string) (finding.Side, string, bool) {
	c := outer(info, cur)
	notif := method == "notifications/tasks/status"
	dispatch := finding.SideServer // a dispatcher serving a request
	if notif {
		dispatch = finding.SideClient // a client receiving the notification
	}
	build := finding.SideClient // building a request
	if notif {
		build = finding.SideServer // a server emitting the notification
	}
	k, idx := c.ParentEdge()
	parent := c.Parent().Node()
	switch k {
	case edge.KeyValueExpr_Value:
		kv := parent.(*ast.KeyValueExpr)
		if isMethodKey(info, kv.Key) {
			return build, "as a method field", true
		}
	case edge.AssignStmt_Rhs:
		as := parent.(*ast.AssignStmt)
		if len(as.Lhs) == len(as.Rhs) && isMethodTarget(info, as.Lhs[idx]) {
			return build, "assigned to a method field", true
		}
	case edge.CaseClause_List:
		sw, ok := c.Parent().Parent().Parent().Node().(*ast.SwitchStmt)
		if ok && sw.Tag != nil && astq.IsMethodExpr(info, sw.Tag) {
			if astq.InRejectingBranch(info, c) {
				return 0, "", false
			}
			return dispatch, "in a method switch", true
		}
	case edge.BinaryExpr_X, edge.BinaryExpr_Y:
		be := parent.(*ast.BinaryExpr)
		other := be.Y
		if k == edge.BinaryExpr_Y {
			other = be.X
		}
		if (be.Op == token.EQL || be.Op == token.NEQ) && astq.IsMethodExpr(info, other) {
			if astq.InRejectingBranch(info, c) {
				return 0, "", false
			}
			return dispatch, "compared with a method name", true
		}
	case edge.CallExpr_Args:
		call := parent.(*ast.CallExpr)
		name := calleeName(call.Fun)
		if name == "" || !cfg.IsMethodCallFunc(name) || firstStringArg(info, call) != idx {
			return 0, "", false
		}
		if registration(name) {
			return dispatch, "registered as a method handler with " + name, true
		}
		return build, "passed as the method to " + name, true
	}
	return 0, "", false
}

// registration reports whether a call name registers a handler rather than
// sending a message.
func registration(name string) bool {
	for _, p := range []string{"Handle", "Register", "On", "Add"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func calleeName(fun ast.Expr) string {
	fun = ast.Unparen(fun)
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	return astq.NameOf(fun)
}

// firstStringArg returns the index of the first argument of string kind.
func firstStringArg(info *types.Info, call *ast.CallExpr) int {
	for i, a := range call.Args {
		if b, ok := info.TypeOf(a).Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
			return i
		}
	}
	return -1
}

// isMethodKey: a struct literal key resolving to a field named Method, or a
// map key "method".
func isMethodKey(info *types.Info, key ast.Expr) bool {
	if id, ok := key.(*ast.Ident); ok {
		if v, ok := info.Uses[id].(*types.Var); ok && v.IsField() {
			return strings.EqualFold(v.Name(), "method")
		}
	}
	s, ok := astq.StringValue(info, key)
	return ok && s == "method"
}

// isMethodTarget: x.Method = … (a field) or m["method"] = ….
func isMethodTarget(info *types.Info, lhs ast.Expr) bool {
	switch l := ast.Unparen(lhs).(type) {
	case *ast.SelectorExpr:
		v, ok := info.Uses[l.Sel].(*types.Var)
		return ok && v.IsField() && strings.EqualFold(v.Name(), "method")
	case *ast.IndexExpr:
		s, ok := astq.StringValue(info, l.Index)
		return ok && s == "method"
	}
	return false
}

func enclosingFunc(cur inspector.Cursor) *ast.FuncDecl {
	for c := range cur.Enclosing((*ast.FuncDecl)(nil)) {
		return c.Node().(*ast.FuncDecl)
	}
	return nil
}

func message(method, where string, side finding.Side) string {
	head := strconv.Quote(method) + " is used as a JSON-RPC method name"
	if where != "" {
		head += " (" + where + ")"
	}
	return head + ", but " + guidance(method, side)
}

func guidance(method string, side finding.Side) string {
	serve := ""
	if side == finding.SideServer {
		serve = "; serve it only to 2025-11-25 sessions and answer -32601 on 2026-07-28 requests"
	}
	switch method {
	case "tasks/result":
		return `the tasks extension removed it (peers answer -32601): poll tasks/get until the task is terminal; a completed task inlines "result", a failed one "error"` + serve
	case "tasks/list":
		return "the tasks extension removed it without replacement (no scoping is possible without sessions); keep the IDs of the tasks you created" + serve
	default:
		return `the extension renamed it to "notifications/tasks" and sends it only for task IDs the client subscribed to with subscriptions/listen`
	}
}

// renameFix replaces the literal with "notifications/tasks", keeping its
// quoting style.
func renameFix(lit *ast.BasicLit) *analysis.SuggestedFix {
	repl := strconv.Quote(NewNotification)
	if strings.HasPrefix(lit.Value, "`") {
		repl = "`" + NewNotification + "`"
	}
	return &analysis.SuggestedFix{
		Message:   `Rename to "notifications/tasks"`,
		TextEdits: []analysis.TextEdit{{Pos: lit.Pos(), End: lit.End(), NewText: []byte(repl)}},
	}
}
