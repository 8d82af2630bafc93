package era

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"
	"regexp"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/edge"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
)

// Analyzer finds dual-era code; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "era",
	Doc:        "find code that serves both MCP task eras",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*Result](),
}

// Result describes the dual-era code of a package.
type Result struct {
	// Implements is set when the package shows a task engine of the
	// extension (tasks/update, resultType "task" or -32021).
	Implements bool
	// branching lists the bodies of functions that branch on the negotiated
	// protocol version.
	branching []span
}

type span struct{ pos, end token.Pos }

// Branches reports whether pos lies in a function that branches on the
// negotiated protocol version.
func (r *Result) Branches(pos token.Pos) bool {
	for _, s := range r.branching {
		if s.pos <= pos && pos < s.end {
			return true
		}
	}
	return false
}

// versionLike matches MCP protocol version strings.
var versionLike = regexp.MustCompile(`^20\d\d-\d\d-\d\d$`)

// eraWords are lower-cased identifier fragments of predicates that tell the
// era of a session or request (IsModernProtocol, isLegacySession). A bare
// protocolVersion field does not count: only a comparison with a version
// constant says which era a branch serves.
var eraWords = []string{"ismodern", "modernprotocol", "islegacy", "legacyprotocol", "legacysession", "modernsession"}

func run(pass *analysis.Pass) (any, error) {
	res := &Result{}
	info := pass.TypesInfo
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	for cur := range ins.Root().Preorder((*ast.BasicLit)(nil), (*ast.KeyValueExpr)(nil), (*ast.Ident)(nil), (*ast.SelectorExpr)(nil), (*ast.FuncDecl)(nil)) {
		switch n := cur.Node().(type) {
		case *ast.FuncDecl:
			if n.Body != nil && branchesOnVersion(info, n.Body) {
				res.branching = append(res.branching, span{n.Body.Pos(), n.Body.End()})
			}
		case *ast.KeyValueExpr:
			k, kok := astq.StringValue(info, n.Key)
			v, vok := astq.StringValue(info, n.Value)
			if kok && vok && k == "resultType" && v == "task" {
				res.Implements = true
			}
		case ast.Expr:
			if k, _ := cur.ParentEdge(); k == edge.SelectorExpr_Sel {
				continue
			}
			tv, ok := info.Types[n]
			if !ok || tv.Value == nil {
				continue
			}
			switch tv.Value.Kind() {
			case constant.String:
				if constant.StringVal(tv.Value) == "tasks/update" {
					res.Implements = true
				}
			case constant.Int:
				if v, exact := constant.Int64Val(tv.Value); exact && v == -32021 {
					res.Implements = true
				}
			}
		}
	}
	return res, nil
}

// branchesOnVersion reports whether body compares something with a protocol
// version constant (==, !=, <, …, or a switch case) or calls or reads an era
// predicate. It walks the body once.
func branchesOnVersion(info *types.Info, body *ast.BlockStmt) bool {
	found := false
	isVersion := func(e ast.Expr) bool {
		s, ok := astq.StringValue(info, e)
		return ok && versionLike.MatchString(s)
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			return false // a closure is not the declaration's own branching
		case *ast.BinaryExpr:
			switch x.Op {
			case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
				found = isVersion(x.X) || isVersion(x.Y)
			}
		case *ast.CaseClause:
			for _, e := range x.List {
				found = found || isVersion(e)
			}
		case *ast.Ident:
			l := strings.ToLower(x.Name)
			for _, w := range eraWords {
				found = found || strings.Contains(l, w)
			}
		}
		return !found
	})
	return found
}
