package reexport

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/catalog"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/config"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/libs"
)

// Analyzer exports wrapper facts; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "reexport",
	Doc:        "facts for wrappers that re-export legacy MCP task library objects",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Run:        run,
	FactTypes:  []analysis.Fact{new(Fact)},
	ResultType: reflect.TypeFor[*Result](),
}

// Fact marks a wrapper object as standing for a catalogue entry.
type Fact struct {
	Family, Pkg, Name string // the catalogue entry's key
}

// AFact implements analysis.Fact.
func (*Fact) AFact() {}

func (f *Fact) String() string {
	return "reexports " + catalog.Entry{Family: f.Family, Pkg: f.Pkg, Name: f.Name}.ID()
}

// Result maps used objects of other packages that carry a Fact to their
// catalogue entries.
type Result struct {
	Objects map[types.Object]catalog.Entry
}

func run(pass *analysis.Pass) (any, error) {
	cfg := config.Current()
	res := &Result{Objects: map[types.Object]catalog.Entry{}}
	var k libs.Keyer
	resolve := func(e ast.Expr) (catalog.Entry, bool) {
		obj := astq.ObjectOf(pass.TypesInfo, astq.Unwrap(pass.TypesInfo, e))
		if obj == nil {
			return catalog.Entry{}, false
		}
		if ent, ok := catalog.Resolve(cfg, &k, obj); ok {
			return ent, true
		}
		if obj.Pkg() != nil && obj.Pkg() != pass.Pkg {
			var f Fact
			if pass.ImportObjectFact(obj, &f) {
				return catalog.Lookup(f.Family, f.Pkg, f.Name)
			}
		}
		return catalog.Entry{}, false
	}
	export := func(id *ast.Ident, ent catalog.Entry) {
		if obj := pass.TypesInfo.Defs[id]; obj != nil && id.IsExported() {
			pass.ExportObjectFact(obj, &Fact{Family: ent.Family, Pkg: ent.Pkg, Name: ent.Name})
		}
	}
	for _, f := range pass.Files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				if d.Tok != token.CONST && d.Tok != token.VAR {
					continue
				}
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					if len(vs.Values) != len(vs.Names) {
						continue
					}
					for i, v := range vs.Values {
						if ent, ok := resolve(v); ok {
							export(vs.Names[i], ent)
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil || d.Body == nil || len(d.Body.List) != 1 {
					continue
				}
				ret, ok := d.Body.List[0].(*ast.ReturnStmt)
				if !ok || len(ret.Results) != 1 {
					continue
				}
				call, ok := ast.Unparen(ret.Results[0]).(*ast.CallExpr)
				if !ok {
					continue
				}
				if ent, ok := resolve(ast.Unparen(call.Fun)); ok {
					export(d.Name, ent)
				}
			}
		}
	}
	for _, obj := range pass.TypesInfo.Uses {
		p := obj.Pkg()
		if p == nil || p == pass.Pkg {
			continue
		}
		switch obj.(type) {
		case *types.Const, *types.Var, *types.Func:
		default:
			continue
		}
		var f Fact
		if pass.ImportObjectFact(obj, &f) {
			if ent, ok := catalog.Lookup(f.Family, f.Pkg, f.Name); ok {
				res.Objects[obj] = ent
			}
		}
	}
	return res, nil
}
