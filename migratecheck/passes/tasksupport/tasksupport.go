package tasksupport

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/era"
)

// Analyzer implements R6; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "tasksupport",
	Doc:        "find the removed tool execution.taskSupport",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, era.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*finding.Result](),
}

const do = `execution.taskSupport was removed from the protocol: a tool that can only run as a task must answer -32021 to clients without the extension; deleting the declaration changes behaviour for 2025-11-25 clients`

func toolDescriptor(keys map[string]bool) bool {
	return keys["name"] && (keys["inputSchema"] || keys["description"])
}

func run(pass *analysis.Pass) (any, error) {
	res := &finding.Result{}
	if pass.ResultOf[era.Analyzer].(*era.Result).Implements {
		// The extension still uses taskSupport internally (a "required" tool
		// answers -32021 to clients without the extension, as mcpkit's v2
		// engine does), so a package implementing it keeps the field.
		return res, nil
	}
	info := pass.TypesInfo
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)

	// Struct types used as the "execution" field of a tool descriptor.
	executionTypes := map[*types.Struct]bool{}
	for cur := range ins.Root().Preorder((*ast.StructType)(nil)) {
		n := cur.Node().(*ast.StructType)
		st, ok := info.TypeOf(n).(*types.Struct)
		if !ok || !toolDescriptor(astq.JSONKeys(st)) {
			continue
		}
		for _, f := range n.Fields.List {
			if astq.FieldJSONName(f) == "execution" {
				if et := astq.StructOf(info.TypeOf(f.Type)); et != nil {
					executionTypes[et] = true
				}
			}
		}
	}

	for cur := range ins.Root().Preorder((*ast.StructType)(nil), (*ast.CompositeLit)(nil)) {
		switch n := cur.Node().(type) {
		case *ast.StructType:
			st, ok := info.TypeOf(n).(*types.Struct)
			if !ok {
				continue
			}
			owner := toolDescriptor(astq.JSONKeys(st)) || executionTypes[st]
			for _, f := range n.Fields.List {
				if astq.FieldJSONName(f) != "taskSupport" {
					continue
				}
				if owner || taskSupportEnum(info.TypeOf(f.Type)) {
					res.Add(finding.Finding{Pos: fpos(f), End: fend(f), Rule: "MCP009", Key: "R6/struct",
						Message: astq.StructName(cur) + ` declares the tool field "taskSupport": ` + do})
				}
			}
		case *ast.CompositeLit:
			exec := astq.MapKeys(info, n)["execution"]
			if exec == nil {
				continue
			}
			if inner := astq.MapLit(info, exec.Value); inner != nil {
				if kv := astq.MapKeys(info, inner)["taskSupport"]; kv != nil {
					res.Add(finding.Finding{Pos: kv.Pos(), End: kv.End(), Rule: "MCP009", Key: "R6/map",
						Message: `tool "execution": {"taskSupport": …} declares the removed task support mode: ` + do})
				}
			}
		}
	}
	return res, nil
}

// taskSupportEnum: a string-kind named type whose package declares
// constants of that type with the values forbidden, optional and required.
func taskSupportEnum(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || !astq.IsStringKind(n) {
		return false
	}
	want := map[string]bool{"forbidden": false, "optional": false, "required": false}
	scope := n.Obj().Pkg().Scope()
	for _, name := range scope.Names() {
		c, ok := scope.Lookup(name).(*types.Const)
		if !ok || !types.Identical(c.Type(), n) || c.Val().Kind() != constant.String {
			continue
		}
		if _, ok := want[constant.StringVal(c.Val())]; ok {
			want[constant.StringVal(c.Val())] = true
		}
	}
	return want["forbidden"] && want["optional"] && want["required"]
}

func fpos(f *ast.Field) token.Pos { p, _ := astq.FieldPos(f); return p }
func fend(f *ast.Field) token.Pos { _, e := astq.FieldPos(f); return e }
