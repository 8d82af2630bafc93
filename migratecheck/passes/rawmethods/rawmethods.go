package rawmethods

//migrate-check:file-ignore MCP001,MCP002,MCP003 this file is R1 itself: it switches on and compares legacy method names

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/edge"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/catalog"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/libs"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/era"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/libapi"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/reexport"
	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Analyzer implements R1; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "rawmethods",
	Doc:        "find removed MCP task method names in JSON-RPC method position",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, reexport.Analyzer, libapi.Analyzer, era.Analyzer},
	Run:        run,
	FactTypes:  []analysis.Fact{new(SinkFact), new(WrapperFact)},
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

// SinkFact marks a function (of any package, exported or not) whose string
// parameters at Params reach a JSON-RPC method position: a Method field, a
// "method" map key, the method argument of a configured call name or of
// another sink. A legacy method name passed there is reported like one
// passed to Call. Register is set when the parameter names a handler being
// registered rather than a message being sent. Tables lists the string-keyed
// map parameters that the function looks up by a received method name
// (results[req.Method], as in a fake server): the keys of a map passed there
// are methods being served.
type SinkFact struct {
	Params   []int
	Register bool
	Tables   []int
}

// AFact implements analysis.Fact.
func (*SinkFact) AFact() {}

func (f *SinkFact) String() string {
	kind := "sends"
	if f.Register {
		kind = "registers"
	}
	if len(f.Tables) > 0 {
		return fmt.Sprintf("method sink %s param %v, method tables %v", kind, f.Params, f.Tables)
	}
	return fmt.Sprintf("method sink %s param %v", kind, f.Params)
}

// WrapperFact marks a function that itself sends a removed method (its
// name is fixed inside: c.Call("tasks/list", nil)), so that each call site,
// in any package, is reported too, pointing at the wrapper.
type WrapperFact struct {
	Method string
}

// AFact implements analysis.Fact.
func (*WrapperFact) AFact() {}

func (f *WrapperFact) String() string { return "sends " + f.Method }

// Hit is one use of a legacy method name in method position.
type Hit struct {
	Pos    token.Pos
	Method string
	Side   finding.Side
	Func   *ast.FuncDecl // enclosing function declaration, if any
	// Lib is set for a catalogued library constant (reported by
	// passes/libapi, counted here as evidence only).
	Lib bool
	// Delegated is set when the method is handed to a function of another
	// package with no handler of this package (router.Handle(ctx,
	// "tasks/list", nil)): the engine that serves it is the callee's.
	Delegated bool
}

// Result lists the findings and every hit.
type Result struct {
	finding.Result
	Hits []Hit
	// Declares is set when the package declares a const or var whose value
	// is tasks/result or tasks/list: it defines the 2025-11-25 protocol
	// surface even where this package does not dispatch it itself.
	Declares bool
	// serves is why the package still serves 2025-11-25 peers ("" = it
	// does not), computed once by ServesLegacy.
	serves string
	lib    *libapi.Result
	era    *era.Result
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

// ServesLegacy says why the package still serves 2025-11-25 peers, or "".
// It is the guard of every opt-in fix (docs/rules/README.md, Fixes): no rename may change a
// type or literal that a 2025-11-25 peer still reads. It does not depend on
// the library family: a catalogued library's own packages are judged by the
// same evidence as any code.
func (r *Result) ServesLegacy() string { return r.serves }

func (r *Result) computeServes() string {
	for _, h := range r.Hits {
		if h.Side == finding.SideServer && h.Method != "notifications/tasks/status" {
			return "the package still serves 2025-11-25 peers (it dispatches " + strconv.Quote(h.Method) + ")"
		}
	}
	for _, h := range r.Hits {
		if h.Method != "notifications/tasks/status" {
			// A client that still calls a removed method talks to 2025-11-25
			// servers, whose tasks carry the legacy field names.
			return "the package still talks to 2025-11-25 peers (it calls " + strconv.Quote(h.Method) + ")"
		}
	}
	if r.Declares {
		return "the package still serves 2025-11-25 peers (it declares their method names, so its wire types are theirs)"
	}
	if len(r.lib.Engine) > 0 {
		return "the package still serves 2025-11-25 peers (it configures " + r.lib.Engine[0].Name + ")"
	}
	for _, f := range r.lib.Findings {
		if f.Side == finding.SideServer {
			return "the package still serves 2025-11-25 peers (it uses the legacy task API on the server side, " + f.Rule + ")"
		}
	}
	if r.era.Implements && r.ServerSide() {
		return "the package still serves 2025-11-25 peers (it serves both eras)"
	}
	return ""
}

type declUse struct {
	lit  *ast.BasicLit
	name string
	hits []Hit
}

func run(pass *analysis.Pass) (any, error) {
	cfg := settings.Current()
	res := &Result{lib: pass.ResultOf[libapi.Analyzer].(*libapi.Result), era: pass.ResultOf[era.Analyzer].(*era.Result)}
	info := pass.TypesInfo
	reex := pass.ResultOf[reexport.Analyzer].(*reexport.Result)
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	sinks := findSinks(pass, cfg, ins)

	// Pre-scan: local const/var declarations initialised with a legacy
	// literal, and whether the new notification name is used anywhere.
	decls := map[types.Object]*declUse{}
	hasNew := false
	for cur, v := range astq.StringLits(ins) {
		if v == NewNotification {
			hasNew = true
		}
		if _, ok := Legacy[v]; !ok {
			continue
		}
		if obj, name := declaredBy(info, cur); obj != nil {
			decls[obj] = &declUse{lit: cur.Node().(*ast.BasicLit), name: name}
			if v != "notifications/tasks/status" {
				res.Declares = true
			}
		}
	}

	if customProtocol(pass, cfg, ins) {
		// Not MCP: a protocol of its own whose "tasks/..." namespace merely
		// shares two names with the 2025-11-25 methods.
		res.serves = res.computeServes()
		return res, nil
	}

	var k libs.Keyer
	// reportedByLibapi: libapi reports this use (a catalogued object of
	// another package, or a wrapper that re-exports one), so R1 only counts
	// it as evidence.
	reportedByLibapi := func(obj types.Object) bool {
		if obj == nil || obj.Pkg() == nil {
			return false
		}
		if _, ok := reex.Objects[obj]; ok {
			return true
		}
		if obj.Pkg() == pass.Pkg {
			return false
		}
		_, ok := catalog.Resolve(cfg, &k, obj)
		return ok
	}

	type pending struct {
		f   finding.Finding
		lit *ast.BasicLit
	}
	var out []pending
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
			if !ok || obj == nil {
				continue
			}
			value = v
		case *ast.Ident:
			if k, _ := cur.ParentEdge(); k == edge.SelectorExpr_Sel {
				continue
			}
			obj = info.Uses[n]
			if obj == nil {
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
		side, where, ok := classify(pass, cfg, sinks, cur, value)
		if !ok {
			continue
		}
		lib := reportedByLibapi(obj)
		h := Hit{Pos: cur.Node().Pos(), Method: value, Side: side, Func: enclosingFunc(cur), Lib: lib,
			Delegated: delegated(pass, cur)}
		res.Hits = append(res.Hits, h)
		if lib {
			continue
		}
		if d, ok := decls[obj]; ok && obj != nil {
			d.hits = append(d.hits, h)
			continue
		}
		f := finding.Finding{Pos: cur.Node().Pos(), End: cur.Node().End(), Rule: rule, Side: side, Key: "R1",
			Message: message(value, where, side)}
		lit, _ := cur.Node().(*ast.BasicLit)
		out = append(out, pending{f, lit})
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
		if allBranch(res.era, d.hits) {
			f.Level = rules.Info
			f.Message += "; every use is in code that branches on the negotiated protocol version, so it already serves both eras: keep it on the 2025-11-25 path only"
			out = append(out, pending{f, nil}) // no fix on a dual-era path
			continue
		}
		out = append(out, pending{f, d.lit})
	}
	for _, f := range wrapperCalls(pass, res) {
		out = append(out, pending{f, nil})
	}
	res.serves = res.computeServes()
	for _, p := range out {
		f := p.f
		if p.lit != nil && f.Rule == "MCP003" && !hasNew && res.serves == "" && !res.era.Branches(p.lit.Pos()) {
			f.Fix, f.FixKind = renameFix(p.lit), finding.FixLiterals
		}
		res.Add(f)
	}
	return res, nil
}

// mcpTaskMethods are the task methods of either era.
var mcpTaskMethods = map[string]bool{"get": true, "result": true, "list": true, "cancel": true, "update": true}

// customProtocol reports whether the package speaks a JSON-RPC protocol of
// its own rather than MCP: it uses "tasks/<name>" method names that MCP
// never had (tasks/create, tasks/retry), and nothing in it is MCP (no MCP
// library import, no other MCP method or key).
func customProtocol(pass *analysis.Pass, cfg *settings.Snapshot, ins *inspector.Inspector) bool {
	for _, imp := range pass.Pkg.Imports() {
		if _, _, ok := libs.Match(cfg, imp.Path()); ok || libs.IsModern(cfg, imp.Path()) {
			return false
		}
	}
	foreign := false
	for _, v := range astq.StringLits(ins) {
		if name, ok := strings.CutPrefix(v, "tasks/"); ok && name != "" && !strings.ContainsAny(name, " /%(") {
			if !mcpTaskMethods[name] {
				foreign = true
			}
			continue
		}
		if mcpMarker(v) {
			return false
		}
	}
	return foreign
}

// mcpMarker: a string only MCP code uses.
func mcpMarker(v string) bool {
	switch v {
	case "initialize", "tools/call", "tools/list", "notifications/initialized", "notifications/tasks", "notifications/tasks/status",
		"sampling/createMessage", "elicitation/create", "resources/read", "prompts/get", "protocolVersion", "2025-11-25", "2026-07-28":
		return true
	}
	return strings.HasPrefix(v, "io.modelcontextprotocol/")
}

// wrapperCalls exports a WrapperFact for every function of this package
// that sends a removed method by a name fixed inside it, and reports each
// call of such a function (this package's or, through the fact, another
// package's) at the call site, with the wrapper as related information:
// the wrapper's own finding says what it sends, the call site says who
// depends on it. Calls inside the wrapper itself and calls in tests are not
// reported; calls in code that branches on the protocol version are lowered
// by the root analyzer like any finding there.
func wrapperCalls(pass *analysis.Pass, res *Result) []finding.Finding {
	local := map[*types.Func]string{}
	for _, h := range res.Hits {
		if h.Func == nil || h.Side != finding.SideClient || h.Method == "notifications/tasks/status" || h.Delegated {
			continue
		}
		fn, ok := pass.TypesInfo.Defs[h.Func.Name].(*types.Func)
		if !ok || strings.HasPrefix(h.Func.Name.Name, "Test") || strings.HasSuffix(pass.Fset.File(h.Pos).Name(), "_test.go") {
			continue
		}
		if _, seen := local[fn]; !seen {
			local[fn] = h.Method
			pass.ExportObjectFact(fn, &WrapperFact{Method: h.Method})
		}
	}
	var out []finding.Finding
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	for cur := range ins.Root().Preorder((*ast.CallExpr)(nil)) {
		call := cur.Node().(*ast.CallExpr)
		fn := callee(pass.TypesInfo, call)
		if fn == nil {
			continue
		}
		method, ok := local[fn]
		if !ok && fn.Pkg() != pass.Pkg {
			var wf WrapperFact
			if pass.ImportObjectFact(fn, &wf) {
				method, ok = wf.Method, true
			}
		}
		if !ok {
			continue
		}
		encl := enclosingFunc(cur)
		if encl != nil && pass.TypesInfo.Defs[encl.Name] == fn {
			continue // recursion inside the wrapper
		}
		if strings.HasSuffix(pass.Fset.File(call.Pos()).Name(), "_test.go") {
			continue // a test of the wrapper (or of its caller) exercises what the wrapper's finding names
		}
		name := fn.Name()
		if fn.Pkg() != nil && fn.Pkg() != pass.Pkg {
			name = fn.Pkg().Name() + "." + name
		}
		res.Hits = append(res.Hits, Hit{Pos: call.Pos(), Method: method, Side: finding.SideClient, Func: encl})
		out = append(out, finding.Finding{Pos: call.Pos(), End: call.End(), Rule: Legacy[method], Side: finding.SideClient, Key: "R1/wrapper",
			Related: []analysis.RelatedInformation{{Pos: fn.Pos(), Message: name + " sends " + strconv.Quote(method) + " here"}},
			Message: "calls " + name + ", which sends " + strconv.Quote(method) + " as a JSON-RPC method, but " + guidance(method, finding.SideClient)})
	}
	return out
}

// delegated reports whether the method at cur is an argument of a call to a
// function declared in another package, with no function among the
// arguments: this package asks that package's engine to serve the method,
// it registers no handler of its own.
func delegated(pass *analysis.Pass, cur inspector.Cursor) bool {
	c := outer(pass.TypesInfo, cur)
	if k, _ := c.ParentEdge(); k != edge.CallExpr_Args {
		return false
	}
	call := c.Parent().Node().(*ast.CallExpr)
	fn := callee(pass.TypesInfo, call)
	if fn == nil || fn.Pkg() == nil || fn.Pkg() == pass.Pkg {
		return false
	}
	for _, a := range call.Args {
		if t := pass.TypesInfo.TypeOf(a); t != nil {
			if _, isFunc := t.Underlying().(*types.Signature); isFunc {
				return false
			}
		}
	}
	return true
}

// allBranch reports whether every hit lies in a function that branches on
// the negotiated protocol version.
func allBranch(e *era.Result, hits []Hit) bool {
	for _, h := range hits {
		if !e.Branches(h.Pos) {
			return false
		}
	}
	return len(hits) > 0
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

// Position kinds of a method-name expression.
type position int

const (
	posNone     position = iota
	posBuild             // a request or notification being built or sent
	posDispatch          // a switch case or comparison on a received method
	posRegister          // a handler being registered for the method
)

// sinkLookup returns the SinkFact of a called function, if any (this
// package's sinks or an imported fact).
type sinkLookup func(fn *types.Func) *SinkFact

// locate decides whether the expression at cur is in JSON-RPC method
// position, and which kind. It is shared by the R1 check and by the sink
// computation (a parameter in method position makes its function a sink).
func locate(info *types.Info, cfg *settings.Snapshot, sinks sinkLookup, cur inspector.Cursor) (inspector.Cursor, position, string) {
	c := outer(info, cur)
	k, idx := c.ParentEdge()
	parent := c.Parent().Node()
	switch k {
	case edge.KeyValueExpr_Value:
		kv := parent.(*ast.KeyValueExpr)
		if isMethodKey(info, kv.Key) {
			return c, posBuild, "as a method field"
		}
	case edge.KeyValueExpr_Key:
		if handlerTable(info, c.Parent().Parent().Node()) {
			return c, posRegister, "as a key of a method handler table"
		}
		if name, ok := passedAsTable(info, sinks, c.Parent().Parent()); ok {
			return c, posDispatch, "as a key of a method table that " + name + " looks up by the received method"
		}
	case edge.IndexExpr_Index:
		ix := parent.(*ast.IndexExpr)
		if pk, _ := c.Parent().ParentEdge(); pk == edge.AssignStmt_Lhs && handlerMap(info.TypeOf(ix.X)) {
			return c, posRegister, "as a key of a method handler table"
		}
	case edge.AssignStmt_Rhs:
		as := parent.(*ast.AssignStmt)
		if len(as.Lhs) == len(as.Rhs) && isMethodTarget(info, as.Lhs[idx]) {
			return c, posBuild, "assigned to a method field"
		}
	case edge.CaseClause_List:
		sw, ok := c.Parent().Parent().Parent().Node().(*ast.SwitchStmt)
		if ok && sw.Tag != nil && astq.IsMethodExpr(info, sw.Tag) {
			return c, posDispatch, "in a method switch"
		}
	case edge.BinaryExpr_X, edge.BinaryExpr_Y:
		be := parent.(*ast.BinaryExpr)
		other := be.Y
		if k == edge.BinaryExpr_Y {
			other = be.X
		}
		if (be.Op == token.EQL || be.Op == token.NEQ) && astq.IsMethodExpr(info, other) {
			return c, posDispatch, "compared with a method name"
		}
	case edge.CallExpr_Args:
		call := parent.(*ast.CallExpr)
		if name := calleeName(call.Fun); name != "" && cfg.IsMethodCallFunc(name) && firstStringArg(info, call) == idx {
			if registration(name) {
				return c, posRegister, "registered as a method handler with " + name
			}
			return c, posBuild, "passed as the method to " + name
		}
		if fn := callee(info, call); fn != nil && sinks != nil {
			if sf := sinks(fn); sf != nil && slices.Contains(sf.Params, idx) {
				if sf.Register {
					return c, posRegister, "registered as a method handler with " + fn.Name() + ", which registers it"
				}
				return c, posBuild, "passed as the method to " + fn.Name() + ", which sends it as a JSON-RPC method"
			}
		}
	}
	return c, posNone, ""
}

// classify decides whether the string constant at cur is in JSON-RPC method
// position, and which peer role that position implies. Code that rejects the
// method (-32601), a client that drops the legacy status notification, and a
// test that asserts METHOD_NOT_FOUND for a removed method are compliant and
// not reported.
func classify(pass *analysis.Pass, cfg *settings.Snapshot, sinks sinkLookup, cur inspector.Cursor, method string) (finding.Side, string, bool) {
	info := pass.TypesInfo
	notif := method == "notifications/tasks/status"
	c, pos, where := locate(info, cfg, sinks, cur)
	if pos != posNone && sampleData(pass, c) {
		return 0, "", false
	}
	switch pos {
	case posDispatch:
		if astq.InRejectingBranch(info, c) || (notif && astq.InDroppingBranch(info, c)) || labelBranch(info, c) {
			return 0, "", false
		}
		if notif {
			return finding.SideClient, where, true // a client receiving the notification
		}
		return finding.SideServer, where, true // a dispatcher serving a request
	case posRegister:
		if notif && dropsHandler(pass, c) {
			return 0, "", false
		}
		if notif {
			return finding.SideClient, where, true
		}
		return finding.SideServer, where, true
	case posBuild:
		if !notif && assertsRemoved(pass, c) {
			return 0, "", false
		}
		if notif {
			return finding.SideServer, where, true // a server emitting the notification
		}
		return finding.SideClient, where, true // a client building a request
	}
	return 0, "", false
}

// dropsHandler reports whether the call registering a handler for the
// notification at c passes a function literal that does nothing with it
// (an empty body or a bare return): accepting and dropping the legacy
// notification is compliant.
func dropsHandler(pass *analysis.Pass, c inspector.Cursor) bool {
	call, ok := c.Parent().Node().(*ast.CallExpr)
	if !ok {
		return false
	}
	for _, a := range call.Args {
		switch a := ast.Unparen(a).(type) {
		case *ast.FuncLit:
			return astq.Drops(a.Body.List)
		case *ast.Ident, *ast.SelectorExpr:
			// A named handler: r.On("notifications/tasks/status", ignore).
			if fd := funcDeclOf(pass, astq.ObjectOf(pass.TypesInfo, a)); fd != nil {
				return astq.Drops(fd.Body.List)
			}
		}
	}
	return false
}

// funcDeclOf returns the declaration, with a body, of a function of this
// package, or nil.
func funcDeclOf(pass *analysis.Pass, obj types.Object) *ast.FuncDecl {
	fn, ok := obj.(*types.Func)
	if !ok || fn.Pkg() != pass.Pkg {
		return nil
	}
	for _, f := range pass.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && pass.TypesInfo.Defs[fd.Name] == fn {
				return fd
			}
		}
	}
	return nil
}

// labelBranch reports whether the method switch case at c only names the
// method for an audit or metrics label: its clause returns or assigns a
// string constant and nothing else, in a function whose results are
// strings. Naming a removed method is not serving it.
func labelBranch(info *types.Info, c inspector.Cursor) bool {
	cc, ok := c.Parent().Node().(*ast.CaseClause)
	if !ok || len(cc.Body) != 1 {
		return false
	}
	isLabel := func(e ast.Expr) bool {
		tv, ok := info.Types[e]
		return ok && tv.Value != nil && astq.IsStringKind(tv.Type)
	}
	switch st := cc.Body[0].(type) {
	case *ast.ReturnStmt:
		if len(st.Results) != 1 || !isLabel(st.Results[0]) {
			return false
		}
		// A function that returns only a string: a label function, not
		// a handler (whose replies are results or errors).
		for fc := range c.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
			var ft *ast.FuncType
			switch fn := fc.Node().(type) {
			case *ast.FuncDecl:
				ft = fn.Type
			case *ast.FuncLit:
				ft = fn.Type
			}
			if ft.Results == nil || len(ft.Results.List) != 1 || len(ft.Results.List[0].Names) > 1 {
				return false
			}
			return astq.IsStringKind(info.TypeOf(ft.Results.List[0].Type))
		}
		return false
	case *ast.AssignStmt:
		if len(st.Rhs) != 1 || len(st.Lhs) != 1 || !isLabel(st.Rhs[0]) {
			return false
		}
		return labelName.MatchString(astq.NameOf(st.Lhs[0]))
	}
	return false
}

// labelName matches variables that hold an audit or metrics label.
var labelName = regexp.MustCompile(`(?i)(label|kind|category|class|action|event|metric|op)$`)

// assertsRemoved reports whether a request for a removed method at c is
// built in a test that expects METHOD_NOT_FOUND for it (the test asserts the
// migration, it does not depend on the method).
func assertsRemoved(pass *analysis.Pass, c inspector.Cursor) bool {
	if !strings.HasSuffix(pass.Fset.File(c.Node().Pos()).Name(), "_test.go") {
		return false
	}
	for fc := range c.Enclosing((*ast.FuncDecl)(nil)) {
		fd := fc.Node().(*ast.FuncDecl)
		return fd.Body != nil && (astq.Rejects(pass.TypesInfo, fd.Body.List) || callsRejecting(pass, fd.Body))
	}
	return false
}

// callsRejecting reports whether body calls a function of this package
// whose body asserts METHOD_NOT_FOUND: the assertion lives in a test helper
// (assertRejected(t, call(tc.method))), often called in a loop over a
// table of removed methods.
func callsRejecting(pass *analysis.Pass, body *ast.BlockStmt) bool {
	var decls map[*types.Func]*ast.FuncDecl
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if found || !ok {
			return !found
		}
		fn := callee(pass.TypesInfo, call)
		if fn == nil || fn.Pkg() != pass.Pkg {
			return true
		}
		if decls == nil {
			decls = map[*types.Func]*ast.FuncDecl{}
			for _, f := range pass.Files {
				for _, d := range f.Decls {
					if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
						if obj, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
							decls[obj] = fd
						}
					}
				}
			}
		}
		if fd := decls[fn]; fd != nil && astq.AssertsNotFound(pass.TypesInfo, fd.Body.List) {
			found = true
		}
		return !found
	})
	return found
}

// sampleData reports whether the method name at c is test data for code
// that handles method names generically (a subscription filter, a router
// table): in a _test.go file, the Method field it fills or is compared with
// belongs to a struct declared in a test file that is not a JSON-RPC
// message (no json "method", "jsonrpc" or "params" key).
func sampleData(pass *analysis.Pass, c inspector.Cursor) bool {
	if !strings.HasSuffix(pass.Fset.File(c.Node().Pos()).Name(), "_test.go") {
		return false
	}
	info := pass.TypesInfo
	var owner types.Type
	var field *types.Var
	k, _ := c.ParentEdge()
	switch k {
	case edge.KeyValueExpr_Value:
		kv := c.Parent().Node().(*ast.KeyValueExpr)
		id, ok := kv.Key.(*ast.Ident)
		if !ok {
			return false
		}
		field, _ = info.Uses[id].(*types.Var)
		if lit, ok := c.Parent().Parent().Node().(*ast.CompositeLit); ok {
			owner = info.TypeOf(lit)
		}
	case edge.BinaryExpr_X, edge.BinaryExpr_Y:
		be := c.Parent().Node().(*ast.BinaryExpr)
		other := be.X
		if k == edge.BinaryExpr_X {
			other = be.Y
		}
		sel, ok := ast.Unparen(other).(*ast.SelectorExpr)
		if !ok {
			return false
		}
		field, _ = info.Uses[sel.Sel].(*types.Var)
		owner = info.TypeOf(sel.X)
	default:
		return false
	}
	st := astq.StructOf(owner)
	if field == nil || !field.IsField() || st == nil || !field.Pos().IsValid() {
		return false
	}
	if tf := pass.Fset.File(field.Pos()); tf == nil || !strings.HasSuffix(tf.Name(), "_test.go") {
		return false
	}
	keys := astq.JSONKeys(st)
	return !keys["method"] && !keys["jsonrpc"] && !keys["params"]
}

// handlerTable: a map composite literal whose values are functions (or
// handler types with a func or interface underlying type).
func handlerTable(info *types.Info, n ast.Node) bool {
	lit, ok := n.(*ast.CompositeLit)
	return ok && handlerMap(info.TypeOf(lit))
}

func handlerMap(t types.Type) bool {
	if t == nil {
		return false
	}
	m, ok := astq.Under(t).(*types.Map)
	if !ok || !astq.IsStringKind(m.Key()) {
		return false
	}
	_, isFunc := astq.Under(m.Elem()).(*types.Signature)
	return isFunc
}

// callee returns the statically called function or method of call, if any.
func callee(info *types.Info, call *ast.CallExpr) *types.Func {
	fun := ast.Unparen(call.Fun)
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	fn, _ := astq.ObjectOf(info, fun).(*types.Func)
	if fn != nil {
		fn = fn.Origin()
	}
	return fn
}

// findSinks computes this package's method sinks to a fixed point (helpers
// that call helpers) and exports a SinkFact for each, so that importers see
// them too.
func findSinks(pass *analysis.Pass, cfg *settings.Snapshot, ins *inspector.Inspector) sinkLookup {
	info := pass.TypesInfo
	local := map[*types.Func]*SinkFact{}
	lookup := func(fn *types.Func) *SinkFact {
		if sf, ok := local[fn]; ok {
			return sf
		}
		if fn.Pkg() == nil || fn.Pkg() == pass.Pkg {
			return nil
		}
		var sf SinkFact
		if pass.ImportObjectFact(fn, &sf) {
			return &sf
		}
		return nil
	}
	type fnInfo struct {
		fn     *types.Func
		params map[*types.Var]int
		uses   []inspector.Cursor
	}
	var fns []fnInfo
	for cur := range ins.Root().Preorder((*ast.FuncDecl)(nil)) {
		fd := cur.Node().(*ast.FuncDecl)
		fn, _ := info.Defs[fd.Name].(*types.Func)
		if fd.Body == nil || fn == nil {
			continue
		}
		params := map[*types.Var]int{}
		sig := fn.Type().(*types.Signature)
		for i := 0; i < sig.Params().Len(); i++ {
			if p := sig.Params().At(i); (astq.IsStringKind(p.Type()) || stringKeyedMap(p.Type())) && !(sig.Variadic() && i == sig.Params().Len()-1) {
				params[p] = i
			}
		}
		if len(params) == 0 {
			continue
		}
		fi := fnInfo{fn: fn, params: params}
		for c := range cur.Preorder((*ast.Ident)(nil)) {
			if v, ok := info.Uses[c.Node().(*ast.Ident)].(*types.Var); ok {
				if _, isParam := params[v]; isParam {
					fi.uses = append(fi.uses, c)
				}
			}
		}
		if len(fi.uses) > 0 {
			fns = append(fns, fi)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, fi := range fns {
			sf := local[fi.fn]
			for _, c := range fi.uses {
				v := info.Uses[c.Node().(*ast.Ident)].(*types.Var)
				i := fi.params[v]
				if stringKeyedMap(v.Type()) {
					if (sf != nil && slices.Contains(sf.Tables, i)) || !tableUse(info, lookup, c) {
						continue
					}
					if sf == nil {
						sf = &SinkFact{}
						local[fi.fn] = sf
					}
					sf.Tables = append(sf.Tables, i)
					changed = true
					continue
				}
				if sf != nil && slices.Contains(sf.Params, i) {
					continue
				}
				_, pos, _ := locate(info, cfg, lookup, c)
				if pos != posBuild && pos != posRegister {
					continue
				}
				if sf == nil {
					sf = &SinkFact{}
					local[fi.fn] = sf
				}
				sf.Params = append(sf.Params, i)
				sf.Register = sf.Register || pos == posRegister
				changed = true
			}
		}
	}
	for fn, sf := range local {
		slices.Sort(sf.Params)
		slices.Sort(sf.Tables)
		pass.ExportObjectFact(fn, sf)
	}
	return lookup
}

func stringKeyedMap(t types.Type) bool {
	m, ok := astq.Under(t).(*types.Map)
	return ok && astq.IsStringKind(m.Key())
}

// tableUse reports whether the map parameter used at c is looked up by a
// received method name (m[req.Method]) or passed on as another function's
// method table.
func tableUse(info *types.Info, sinks sinkLookup, c inspector.Cursor) bool {
	if k, _ := c.ParentEdge(); k == edge.IndexExpr_X {
		// A read whose value is a reply: an allow-list (map[string]bool) or
		// a counter (m[method]++) of metrics labels does not serve anything.
		if pk, _ := c.Parent().ParentEdge(); pk == edge.AssignStmt_Lhs || pk == edge.IncDecStmt_X {
			return false
		}
		return replyElem(info.TypeOf(c.Node().(ast.Expr))) && astq.IsMethodExpr(info, c.Parent().Node().(*ast.IndexExpr).Index)
	}
	_, ok := passedAsTable(info, sinks, c)
	return ok
}

// replyElem: the map's values can be replies (not flags, counters or empty
// structs).
func replyElem(t types.Type) bool {
	m, ok := astq.Under(t).(*types.Map)
	if !ok {
		return false
	}
	switch e := astq.Under(m.Elem()).(type) {
	case *types.Basic:
		return e.Info()&(types.IsBoolean|types.IsNumeric) == 0
	case *types.Struct:
		return e.NumFields() > 0
	}
	return true
}

// passedAsTable reports whether the expression at c is an argument that a
// sink takes as a method table, and names the sink.
func passedAsTable(info *types.Info, sinks sinkLookup, c inspector.Cursor) (string, bool) {
	if sinks == nil {
		return "", false
	}
	c = outer(info, c)
	k, idx := c.ParentEdge()
	if k != edge.CallExpr_Args {
		return "", false
	}
	fn := callee(info, c.Parent().Node().(*ast.CallExpr))
	if fn == nil {
		return "", false
	}
	if sf := sinks(fn); sf != nil && slices.Contains(sf.Tables, idx) {
		return fn.Name(), true
	}
	return "", false
}

// registration reports whether a call name registers a handler rather than
// sending a message.
func registration(name string) bool {
	for _, p := range []string{"Handle", "Register", "On", "Add"} {
		if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
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
		if b, ok := astq.Under(info.TypeOf(a)).(*types.Basic); ok && b.Info()&types.IsString != 0 {
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
