package rawkeys

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/rawmethods"
)

// Analyzer finds legacy keys on raw JSON maps; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "rawkeys",
	Doc:        "find legacy MCP task keys read from or written to raw JSON maps",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, rawmethods.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*finding.Result](),
}

var taskKeys = map[string]struct{ rule, msg string }{
	"ttl":          {"MCP006", `the extension's field is "ttlMs" (integer milliseconds, nullable, required)`},
	"pollInterval": {"MCP007", `the extension's field is "pollIntervalMs"`},
}

var capabilityKeys = map[string]bool{"tools": true, "resources": true, "prompts": true, "logging": true,
	"completions": true, "experimental": true, "sampling": true, "elicitation": true, "roots": true, "extensions": true}

// use is one constant-key access of a map.
type use struct {
	key   string
	pos   token.Pos
	end   token.Pos
	write bool
}

func run(pass *analysis.Pass) (any, error) {
	res := &finding.Result{}
	raw := pass.ResultOf[rawmethods.Analyzer].(*rawmethods.Result)
	if astq.StoragePackage(pass.Pkg) && len(raw.Hits) == 0 && raw.ServesLegacy() == "" {
		return res, nil
	}
	info := pass.TypesInfo
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	for cur := range ins.Root().Preorder((*ast.FuncDecl)(nil), (*ast.CompositeLit)(nil)) {
		switch n := cur.Node().(type) {
		case *ast.FuncDecl:
			if n.Body != nil {
				checkFunc(pass, res, n.Body)
			}
		case *ast.CompositeLit:
			keys := astq.MapKeys(info, n)
			if keys["taskId"] == nil || keys["status"] == nil {
				continue
			}
			for k, r := range taskKeys {
				if kv := keys[k]; kv != nil {
					res.Add(finding.Finding{Pos: kv.Key.Pos(), End: kv.Key.End(), Rule: r.rule, Key: "R2/map",
						Message: `raw JSON key ` + strconv.Quote(k) + ` written to a task object is the legacy Task field: ` + r.msg})
				}
			}
		}
	}
	return res, nil
}

// checkFunc groups the constant-key index expressions of one function body
// by map (variable, or expression text) and judges each map by its keys.
func checkFunc(pass *analysis.Pass, res *finding.Result, body *ast.BlockStmt) {
	info := pass.TypesInfo
	uses := map[string][]use{}
	var order []string
	writes := map[ast.Expr]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok {
			for _, l := range as.Lhs {
				writes[ast.Unparen(l)] = true
			}
		}
		ix, ok := n.(*ast.IndexExpr)
		if !ok {
			return true
		}
		m, ok := astq.Under(info.TypeOf(ix.X)).(*types.Map)
		if !ok || !astq.IsStringKind(m.Key()) {
			return true
		}
		k, ok := astq.StringValue(info, ix.Index)
		if !ok {
			return true
		}
		id := mapID(info, ix.X)
		if _, seen := uses[id]; !seen {
			order = append(order, id)
		}
		uses[id] = append(uses[id], use{key: k, pos: ix.Index.Pos(), end: ix.Index.End(), write: writes[ix]})
		return true
	})
	for _, id := range order {
		us := uses[id]
		has := map[string]bool{}
		for _, u := range us {
			has[u.key] = true
		}
		task := has["taskId"] || has["status"]
		params := has["name"] || has["arguments"]
		caps := strings.Contains(strings.ToLower(id), "capabilit") || strings.Contains(strings.ToLower(id), "caps")
		for k := range capabilityKeys {
			caps = caps || has[k]
		}
		for _, u := range us {
			switch {
			case task && taskKeys[u.key].rule != "":
				r := taskKeys[u.key]
				verb := "read from"
				if u.write {
					verb = "written to"
				}
				res.Add(finding.Finding{Pos: u.pos, End: u.end, Rule: r.rule, Key: "R2/map",
					Message: `raw JSON key ` + strconv.Quote(u.key) + ` ` + verb + ` a task object is the legacy Task field: ` + r.msg})
			case params && u.key == "task" && !u.write:
				res.Add(finding.Finding{Pos: u.pos, End: u.end, Rule: "MCP005", Side: finding.SideServer, Key: "R5/read",
					Message: `params "task" read from tools/call params is the removed 2025-11-25 task augmentation: servers must ignore it; the server decides per request whether to answer with a task`})
			case caps && u.key == "tasks" && !u.write:
				res.Add(finding.Finding{Pos: u.pos, End: u.end, Rule: "MCP004", Side: finding.SideClient, Key: "R4/read",
					Message: `capabilities "tasks" read from a capabilities map is the 2025-11-25 task capability: a 2026-07-28 peer declares capabilities.extensions["io.modelcontextprotocol/tasks"] instead`})
			}
		}
	}
}

// mapID names the map an index expression reads: its variable (with the
// object's position, so shadowed names stay apart) or its expression text.
func mapID(info *types.Info, x ast.Expr) string {
	x = ast.Unparen(x)
	if id, ok := x.(*ast.Ident); ok {
		if obj := info.Uses[id]; obj != nil {
			return id.Name + "@" + strconv.Itoa(int(obj.Pos()))
		}
	}
	return types.ExprString(x)
}
