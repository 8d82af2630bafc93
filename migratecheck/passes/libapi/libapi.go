package libapi

import (
	"fmt"
	"go/ast"
	"go/token"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/catalog"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/libs"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/reexport"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Analyzer finds library uses; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "libapi",
	Doc:        "find legacy MCP task APIs of Go MCP libraries by resolved object",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, reexport.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*Result](),
}

// Result lists findings plus the legacy engine uses needed by MCP014.
type Result struct {
	finding.Result
	Engine   []Use // uses of catalogue entries marked Engine
	Features libs.Features
}

// Use is one use of a catalogued identifier.
type Use struct {
	Pos   token.Pos
	Name  string // "mcp-go server.WithTaskCapabilities"
	Entry catalog.Entry
}

func run(pass *analysis.Pass) (any, error) {
	cfg := settings.Current()
	res := &Result{}
	reex := pass.ResultOf[reexport.Analyzer].(*reexport.Result)
	res.Features = libs.Probe(cfg, pass.Pkg)
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	info := pass.TypesInfo
	var k libs.Keyer
	// mcpgoVersion is the mcp-go version the package's go.mod requires ("" if
	// unknown), read only when a hint needs it.
	var mcpgoVersion func() string
	{
		var once sync.Once
		var v string
		mcpgoVersion = func() string {
			once.Do(func() {
				if len(pass.Files) == 0 {
					return
				}
				dir := filepath.Dir(pass.Fset.File(pass.Files[0].Pos()).Name())
				for _, prefix := range cfg.Libraries[settings.FamilyMCPGo] {
					if v = libs.RequiredVersion(dir, pass.Pkg.Path(), prefix); v != "" {
						return
					}
				}
			})
			return v
		}
	}
	type lineKey struct {
		file *token.File
		line int
		rule string
	}
	seen := map[lineKey]bool{}
	for cur := range ins.Root().Preorder((*ast.Ident)(nil)) {
		id := cur.Node().(*ast.Ident)
		obj := info.Uses[id]
		if _, wrapper := reex.Objects[obj]; obj == nil || (obj.Pkg() == pass.Pkg && !wrapper) {
			// A package's references to its own declarations are not uses of
			// an API (like staticcheck's SA1019); the raw rules judge what
			// the declaring package does with them. Other packages of the
			// same library are analysed like any code.
			continue
		}
		ent, ok := catalog.Resolve(cfg, &k, obj)
		via := ""
		if !ok {
			if ent, ok = reex.Objects[obj]; !ok {
				continue
			}
			via = obj.Pkg().Name() + "." + obj.Name()
		}
		subject := libs.Display[ent.Family] + " " + qualified(ent)
		if ent.Engine {
			res.Engine = append(res.Engine, Use{Pos: id.Pos(), Name: subject, Entry: ent})
		}
		if ent.Rule == "" || astq.InRejectingBranch(info, cur) {
			continue
		}
		side := ent.Side
		if ent.Rule == "MCP005" && strings.Contains(ent.Name, ".") {
			side = fieldSide(cur)
		}
		if via != "" && reex.Accessors[obj] {
			subject = via + " (which reads " + subject + ")"
		} else if via != "" {
			subject = via + " (which re-exports " + subject + ")"
		}
		do := ent.Do
		if do == "" {
			do = catalog.RuleDo[ent.Rule]
		}
		what := ent.What
		if rest, ok := strings.CutPrefix(what, "declares "); ok && strings.Contains(ent.Name, ".") && fieldSide(cur) == finding.SideServer {
			// A read such as `if tool.Execution == nil` declares nothing.
			what = "is read here; it holds " + rest
		}
		msg := subject + " " + what + ": " + do + probeNote(ent, res.Features, mcpgoVersion)
		tf := pass.Fset.File(id.Pos())
		lk := lineKey{tf, tf.Line(id.Pos()), ent.Rule}
		if !seen[lk] {
			seen[lk] = true
			res.Add(finding.Finding{Pos: id.Pos(), End: id.End(), Rule: ent.Rule, Message: msg,
				Level: ent.Level, Side: side, Key: ent.ID()})
		}
		if ent.Family == settings.FamilyMCPGo && ent.Name == "WithTaskCapabilities" {
			if arg := firstArgIfCalled(cur); arg != nil {
				if tv := info.Types[arg]; tv.Value != nil && tv.Value.String() == "true" {
					res.Add(finding.Finding{Pos: arg.Pos(), End: arg.End(), Rule: "MCP002", Side: finding.SideServer,
						Key:     ent.ID() + "(list=true)",
						Message: subject + "(list=true, …) serves the removed tasks/list method: " + catalog.RuleDo["MCP002"]})
				}
			}
		}
	}
	return res, nil
}

// qualified renders an entry as pkg.Name with the library's package name.
func qualified(ent catalog.Entry) string {
	pkg := path.Base(ent.Pkg)
	if ent.Pkg == "" {
		pkg = map[string]string{settings.FamilyFineMCP: "finemcp", settings.FamilyTMC: "mcp"}[ent.Family]
	}
	return pkg + "." + ent.Name
}

// fieldSide classifies a use of an MCP005 field: setting it (composite
// literal key or assignment target) builds a request (client side); reading
// it handles one (server side).
func fieldSide(cur inspector.Cursor) finding.Side {
	node := cur
	if p := cur.Parent(); p.Valid() {
		if sel, ok := p.Node().(*ast.SelectorExpr); ok && sel.Sel == cur.Node() {
			node = p
		}
	}
	parent := node.Parent()
	switch n := parent.Node().(type) {
	case *ast.KeyValueExpr:
		if n.Key == node.Node() {
			return finding.SideClient
		}
	case *ast.AssignStmt:
		for _, l := range n.Lhs {
			if l == node.Node() {
				return finding.SideClient
			}
		}
	}
	return finding.SideServer
}

// firstArgIfCalled returns the first argument of the call whose callee is
// the identifier at cur (directly or as a selector), or nil.
func firstArgIfCalled(cur inspector.Cursor) ast.Expr {
	fun := cur
	if p := cur.Parent(); p.Valid() {
		if sel, ok := p.Node().(*ast.SelectorExpr); ok && sel.Sel == cur.Node() {
			fun = p
		}
	}
	call, ok := fun.Parent().Node().(*ast.CallExpr)
	if !ok || call.Fun != fun.Node() || len(call.Args) == 0 {
		return nil
	}
	return call.Args[0]
}

// Versions of mcp-go APIs that the hints recommend.
const (
	mcpgoExtensionsSince  = "v1.0.0-beta.1" // server.WithExtensions, ServerCapabilities.Extensions
	mcpgoWaitForTaskSince = "v1.0.0"        // client.WaitForTask
)

// probeNote adapts guidance to the library version in use: the API the
// type checker sees (the feature probe) and, when the package does not
// import the probed package, the version its go.mod requires. The go.mod
// version is cited only when it agrees with the API the hint describes (a
// replace directive or a fork can make the two differ, and a hint must
// never name a version that lacks the API it cites).
func probeNote(ent catalog.Entry, f libs.Features, version func() string) string {
	if ent.Family != settings.FamilyMCPGo {
		return ""
	}
	v := version()
	// has decides from the probe when it saw the API's package, else from
	// the required version; cite is the go.mod remark for that answer.
	has := func(probed, found bool, since string) (bool, string) {
		ok := found || (!probed && libs.AtLeast(v, since))
		if v == "" || libs.AtLeast(v, since) != ok {
			return ok, ""
		}
		return ok, " (go.mod requires " + v + ")"
	}
	var b strings.Builder
	switch {
	case ent.Rule == "MCP004":
		if ok, cite := has(f.MCPGoExtProbed, f.MCPGoExtensions, mcpgoExtensionsSince); ok {
			b.WriteString("; this mcp-go" + cite + " provides server.WithExtensions, but its own task engine still speaks 2025-11-25, so declare the extension only for an engine that implements it")
		} else {
			b.WriteString("; this mcp-go" + cite + " predates the extension APIs (no server.WithExtensions): upgrade to v1.0.0 or later (the first stable release with them) before declaring the extension")
		}
	case ent.Name == "Client.TaskResult":
		if ok, cite := has(f.MCPGoWaitProbed, f.MCPGoWaitForTask, mcpgoWaitForTaskSince); ok {
			b.WriteString("; with this mcp-go" + cite + ", client.WaitForTask does the polling, but its GetTaskResult has no result field yet")
		} else {
			b.WriteString("; this mcp-go" + cite + " has no client.WaitForTask (added in " + mcpgoWaitForTaskSince + "), so loop client.GetTask, and note its GetTaskResult has no result field yet")
		}
	}
	if f.MCPGoResultTypeTask && (ent.Rule == "MCP004" || ent.Rule == "MCP008") {
		fmt.Fprintf(&b, "; this mcp-go defines mcp.ResultTypeTask: check whether it now implements the extension")
	}
	return b.String()
}
