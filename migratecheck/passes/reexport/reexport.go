package reexport

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/catalog"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/libs"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
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
	// Reads is set for an accessor: a function that returns (or tests) the
	// catalogued field, such as a "has task params" or "extract task ttl"
	// helper around req.Params.Task.
	Reads bool
}

// AFact implements analysis.Fact.
func (*Fact) AFact() {}

func (f *Fact) String() string {
	if f.Reads {
		return "reads " + catalog.Entry{Family: f.Family, Pkg: f.Pkg, Name: f.Name}.ID()
	}
	return "reexports " + catalog.Entry{Family: f.Family, Pkg: f.Pkg, Name: f.Name}.ID()
}

// Result maps used objects of other packages that carry a Fact to their
// catalogue entries, and this package's own accessors (functions that
// return a catalogued per-request task field) to theirs.
type Result struct {
	Objects map[types.Object]catalog.Entry
	// Accessors is the subset of Objects that read a field rather than
	// re-export an object.
	Accessors map[types.Object]bool
}

func run(pass *analysis.Pass) (any, error) {
	cfg := settings.Current()
	res := &Result{Objects: map[types.Object]catalog.Entry{}, Accessors: map[types.Object]bool{}}
	var k libs.Keyer
	local := map[types.Object]*Fact{} // accessors of this package
	lookupObj := func(obj types.Object) (catalog.Entry, *Fact, bool) {
		if obj == nil {
			return catalog.Entry{}, nil, false
		}
		if ent, ok := catalog.Resolve(cfg, &k, obj); ok {
			return ent, nil, true
		}
		if f := local[obj]; f != nil {
			ent, ok := catalog.Lookup(f.Family, f.Pkg, f.Name)
			return ent, f, ok
		}
		if obj.Pkg() != nil && obj.Pkg() != pass.Pkg {
			var f Fact
			if pass.ImportObjectFact(obj, &f) {
				ent, ok := catalog.Lookup(f.Family, f.Pkg, f.Name)
				return ent, &f, ok
			}
		}
		return catalog.Entry{}, nil, false
	}
	resolve := func(e ast.Expr) (catalog.Entry, bool) {
		ent, _, ok := lookupObj(astq.ObjectOf(pass.TypesInfo, astq.Unwrap(pass.TypesInfo, e)))
		return ent, ok
	}
	export := func(id *ast.Ident, ent catalog.Entry) {
		if obj := pass.TypesInfo.Defs[id]; obj != nil && id.IsExported() {
			pass.ExportObjectFact(obj, &Fact{Family: ent.Family, Pkg: ent.Pkg, Name: ent.Name})
		}
	}
	// accessed returns the per-request task field (catalogue rule MCP005,
	// a field such as CallToolParams.Task or TaskParams.TTL) that one of
	// the body's return statements yields or tests, directly or through
	// another accessor.
	accessed := func(body *ast.BlockStmt) (catalog.Entry, bool) {
		// Local variables assigned from such a field (ttl := req.Params.Task.TTL)
		// carry it to the return statement.
		tainted := map[types.Object]catalog.Entry{}
		// reads finds the first catalogued per-request task field read in e.
		reads := func(e ast.Expr) (catalog.Entry, bool) {
			var found catalog.Entry
			ok := false
			ast.Inspect(e, func(n ast.Node) bool {
				var obj types.Object
				switch y := n.(type) {
				case *ast.FuncLit:
					return false
				case *ast.SelectorExpr:
					obj = pass.TypesInfo.Uses[y.Sel]
				case *ast.Ident:
					obj = pass.TypesInfo.Uses[y]
					if ent, hit := tainted[obj]; hit {
						found, ok = ent, true
						return false
					}
				}
				if ent, f, hit := lookupObj(obj); hit && ent.Rule == "MCP005" && (strings.Contains(ent.Name, ".") || (f != nil && f.Reads)) {
					found, ok = ent, true
				}
				return !ok
			})
			return found, ok
		}
		var found catalog.Entry
		ok := false
		ast.Inspect(body, func(n ast.Node) bool {
			if ok {
				return false
			}
			switch x := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.AssignStmt:
				if len(x.Lhs) == len(x.Rhs) {
					for i, l := range x.Lhs {
						id, isID := l.(*ast.Ident)
						if !isID {
							continue
						}
						obj := pass.TypesInfo.ObjectOf(id)
						if ent, hit := reads(x.Rhs[i]); hit && obj != nil {
							tainted[obj] = ent
						}
					}
				}
			case *ast.ReturnStmt:
				for _, r := range x.Results {
					if found, ok = reads(r); ok {
						break
					}
				}
			}
			return !ok
		})
		return found, ok
	}
	// Accessors first, to a fixed point (accessors calling accessors). Only
	// a package that imports a catalogued library, or a package with an
	// accessor fact, can have one: skip the walk otherwise.
	mayAccess := false
	for _, imp := range pass.Pkg.Imports() {
		if libs.IsLibrary(cfg, imp.Path()) {
			mayAccess = true
		}
	}
	for _, of := range pass.AllObjectFacts() {
		if f, ok := of.Fact.(*Fact); ok && f.Reads {
			mayAccess = true
		}
	}
	for changed := mayAccess; changed; {
		changed = false
		for _, f := range pass.Files {
			for _, decl := range f.Decls {
				d, ok := decl.(*ast.FuncDecl)
				if !ok || d.Body == nil {
					continue
				}
				obj := pass.TypesInfo.Defs[d.Name]
				if obj == nil || local[obj] != nil {
					continue
				}
				if ent, ok := accessed(d.Body); ok {
					local[obj] = &Fact{Family: ent.Family, Pkg: ent.Pkg, Name: ent.Name, Reads: true}
					changed = true
				}
			}
		}
	}
	for obj, f := range local {
		pass.ExportObjectFact(obj, f)
		if ent, ok := catalog.Lookup(f.Family, f.Pkg, f.Name); ok {
			res.Objects[obj], res.Accessors[obj] = ent, true
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
				if f.Reads {
					res.Accessors[obj] = true
				}
			}
		}
	}
	return res, nil
}
