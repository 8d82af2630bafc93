package capabilities

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
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/libs"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Analyzer implements R4; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "capabilities",
	Doc:        "find capabilities.tasks declarations and extension advertisements",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*Result](),
}

// ExtensionID is the tasks extension identifier.
const ExtensionID = "io.modelcontextprotocol/tasks"

// Result lists findings and extension advertisements.
type Result struct {
	finding.Result
	Adverts []Span
}

// Span is the source range of an advertisement.
type Span struct{ Pos, End token.Pos }

// capabilityKeys are the sibling keys of "tasks" in server (tools, …) and
// client (sampling, roots, elicitation) capability objects.
var capabilityKeys = []string{"tools", "resources", "prompts", "logging", "completions", "experimental", "sampling", "roots", "elicitation"}

var advertFuncs = map[string]bool{"AddExtension": true, "WithExtension": true, "RegisterExtension": true, "SetExtension": true}

func run(pass *analysis.Pass) (any, error) {
	res := &Result{}
	info := pass.TypesInfo
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	hint := extensionHint(libs.Probe(settings.Current(), pass.Pkg))

	checkTasksValue := func(cur inspector.Cursor, keyNode ast.Node, value ast.Expr, side finding.Side) {
		lit := astq.MapLit(info, value)
		var keys map[string]*ast.KeyValueExpr
		if lit != nil {
			keys = astq.MapKeys(info, lit)
		} else if id, ok := ast.Unparen(value).(*ast.Ident); ok {
			// tasks := map[string]any{…}; tasks["list"] = …; caps["tasks"] = tasks
			keys = astq.VarMapKeys(info, cur, info.Uses[id])
		}
		if keys["list"] == nil && keys["cancel"] == nil && keys["requests"] == nil {
			return
		}
		res.Add(finding.Finding{Pos: keyNode.Pos(), End: keyNode.End(), Rule: "MCP004", Side: side, Key: "R4/map",
			Message: `capabilities "tasks" {list, cancel, requests} is the 2025-11-25 task capability: declare capabilities.extensions["` + ExtensionID + `"] instead` + hint})
		if req := keys["requests"]; req != nil {
			if rl := astq.MapLit(info, req.Value); rl != nil {
				rk := astq.MapKeys(info, rl)
				for _, k := range []string{"sampling", "elicitation"} {
					if kv := rk[k]; kv != nil {
						res.Add(finding.Finding{Pos: kv.Pos(), End: kv.End(), Rule: "MCP013", Key: "R4/" + k,
							Message: `capabilities.tasks.requests.` + k + ` declares client-hosted task-augmented ` + k + `: the extension has no client-hosted tasks (SEP-2260 forbids unsolicited server-to-client requests)`})
					}
				}
			}
		}
	}

	for cur := range ins.Root().Preorder((*ast.CompositeLit)(nil), (*ast.AssignStmt)(nil), (*ast.StructType)(nil), (*ast.BasicLit)(nil), (*ast.Ident)(nil), (*ast.SelectorExpr)(nil)) {
		switch n := cur.Node().(type) {
		case *ast.CompositeLit:
			if kv := astq.MapKeys(info, n)["tasks"]; kv != nil {
				checkTasksValue(cur, kv.Key, kv.Value, finding.SideUnknown)
			}
		case *ast.AssignStmt:
			if len(n.Lhs) != len(n.Rhs) {
				continue
			}
			for i, l := range n.Lhs {
				if ix, ok := ast.Unparen(l).(*ast.IndexExpr); ok {
					if s, ok := astq.StringValue(info, ix.Index); ok && s == "tasks" {
						checkTasksValue(cur, ix.Index, n.Rhs[i], finding.SideUnknown)
					}
				}
			}
		case *ast.StructType:
			st, ok := info.TypeOf(n).(*types.Struct)
			if !ok {
				continue
			}
			keys := astq.JSONKeys(st)
			looksLikeCaps := false
			for _, k := range capabilityKeys {
				looksLikeCaps = looksLikeCaps || keys[k]
			}
			if !looksLikeCaps {
				continue
			}
			name := astq.StructName(cur)
			side := finding.SideUnknown
			switch {
			case strings.Contains(name, "Server"):
				side = finding.SideServer
			case strings.Contains(name, "Client"):
				side = finding.SideClient
			}
			for _, f := range n.Fields.List {
				if astq.FieldJSONName(f) != "tasks" {
					continue
				}
				switch astq.Under(info.TypeOf(f.Type)).(type) {
				case *types.Slice, *types.Array, *types.Map:
					continue
				}
				res.Add(finding.Finding{Pos: fpos(f), End: fend(f), Rule: "MCP004", Side: side, Key: "R4/struct",
					Message: name + ` declares the 2025-11-25 capabilities.tasks: declare capabilities.extensions["` + ExtensionID + `"] instead` + hint})
			}
		case *ast.BasicLit, *ast.Ident, *ast.SelectorExpr:
			if k, _ := cur.ParentEdge(); k == edge.SelectorExpr_Sel {
				continue
			}
			if s, ok := astq.StringValue(info, n.(ast.Expr)); !ok || s != ExtensionID {
				continue
			}
			if advertises(info, cur) {
				res.Adverts = append(res.Adverts, Span{n.Pos(), n.End()})
			}
		}
	}
	return res, nil
}

// advertises reports whether the extension ID at cur is declared (map
// literal key, index assignment key, or AddExtension-style argument).
func advertises(info *types.Info, cur inspector.Cursor) bool {
	cur = astq.Outermost(info, cur)
	k, idx := cur.ParentEdge()
	switch k {
	case edge.KeyValueExpr_Key:
		return astq.MapLiteralKey(info, cur)
	case edge.IndexExpr_Index:
		ke, _ := cur.Parent().ParentEdge()
		return ke == edge.AssignStmt_Lhs
	case edge.CallExpr_Args:
		call := cur.Parent().Node().(*ast.CallExpr)
		return idx == 0 && advertFuncs[astq.NameOf(ast.Unparen(call.Fun))]
	}
	return false
}

func extensionHint(f libs.Features) string {
	switch {
	case f.GoSDKAddExtension:
		return `; with go-sdk use ServerCapabilities.AddExtension("` + ExtensionID + `", nil)`
	case f.GoSDK:
		return "; go-sdk gained ServerCapabilities.AddExtension in v1.4.0"
	case f.MCPGoExtensions:
		return "; mcp-go declares it with server.WithExtensions"
	}
	return ""
}

func fpos(f *ast.Field) token.Pos { p, _ := astq.FieldPos(f); return p }
func fend(f *ast.Field) token.Pos { _, e := astq.FieldPos(f); return e }
