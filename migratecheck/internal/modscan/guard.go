package modscan

import (
	"go/ast"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/catalog"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Guard is the module-wide half of the fix guard (docs/rules/README.md,
// Fixes): a
// type is renamed only if no other package of the module — analysed in
// this run or not — still speaks 2025-11-25 through it. The declaring
// package's pass cannot see its importers, so it asks modscan, which reads
// the module's files; every driver mode then gets the same answer and the
// message never promises a fix that the same command would not apply.
type Guard struct {
	cache map[*types.TypeName]string
}

// NewGuard returns a guard for one pass.
func NewGuard() *Guard { return &Guard{cache: map[*types.TypeName]string{}} }

// legacyLiterals are the strings only 2025-11-25 task code uses.
var legacyLiterals = map[string]bool{"tasks/result": true, "tasks/list": true, "notifications/tasks/status": true, "2025-11-25": true}

// Why returns why the struct type at cur (or the named type that encloses
// it) must be treated as a 2025-11-25 wire type because another package
// of the module still sends it to 2025-11-25 peers, or "".
func (g *Guard) Why(pass *analysis.Pass, cur inspector.Cursor) string {
	tn := outerTypeName(pass, cur)
	if tn == nil {
		return ""
	}
	if why, ok := g.cache[tn]; ok {
		return why
	}
	why := ""
	if tf := pass.Fset.File(cur.Node().Pos()); tf != nil {
		uses := LegacyUses(filepath.Dir(tf.Name()), pass.Pkg.Path(), pass.Pkg.Name(), carriers(pass.Pkg, tn), evidence())
		if len(uses) > 0 {
			why = "package " + uses[0].Package + " of this module still sends " + tn.Name() + " to 2025-11-25 peers (" + uses[0].Why + ")"
			if len(uses) > 1 {
				why += " and so do " + plural(len(uses)-1) + " more"
			}
		}
	}
	g.cache[tn] = why
	return why
}

func plural(n int) string {
	if n == 1 {
		return "1 package"
	}
	return strconv.Itoa(n) + " packages"
}

// outerTypeName returns the package-level named type whose declaration
// contains the struct type at cur (itself, or a type with it as a field's
// anonymous struct), or nil.
func outerTypeName(pass *analysis.Pass, cur inspector.Cursor) *types.TypeName {
	var tn *types.TypeName
	for c := cur; c.Node() != nil; c = c.Parent() {
		if ts, ok := c.Node().(*ast.TypeSpec); ok {
			if obj, ok := pass.TypesInfo.Defs[ts.Name].(*types.TypeName); ok && obj.Parent() == pass.Pkg.Scope() {
				tn = obj
			}
		}
		if _, ok := c.Node().(*ast.File); ok {
			break
		}
	}
	return tn
}

// carriers returns the package-level identifiers of pkg through which tn
// can reach another package: tn itself and every object whose type
// mentions it (fields, pointers, containers and signatures, a few levels
// deep).
func carriers(pkg *types.Package, tn *types.TypeName) map[string]bool {
	out := map[string]bool{tn.Name(): true}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if obj != tn && reaches(obj.Type(), tn, 0, map[types.Type]bool{}) {
			out[name] = true
		}
	}
	return out
}

func reaches(t types.Type, tn *types.TypeName, depth int, seen map[types.Type]bool) bool {
	if t == nil || depth > 4 || seen[t] {
		return false
	}
	seen[t] = true
	switch t := types.Unalias(t).(type) {
	case *types.Named:
		if t.Obj() == tn {
			return true
		}
		if t.Obj().Pkg() != tn.Pkg() {
			return false // another package's type cannot contain ours without importing us
		}
		return reaches(t.Underlying(), tn, depth+1, seen)
	case *types.Pointer:
		return reaches(t.Elem(), tn, depth, seen)
	case *types.Slice:
		return reaches(t.Elem(), tn, depth, seen)
	case *types.Array:
		return reaches(t.Elem(), tn, depth, seen)
	case *types.Map:
		return reaches(t.Key(), tn, depth, seen) || reaches(t.Elem(), tn, depth, seen)
	case *types.Chan:
		return reaches(t.Elem(), tn, depth, seen)
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if reaches(t.Field(i).Type(), tn, depth+1, seen) {
				return true
			}
		}
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := 0; i < tup.Len(); i++ {
				if reaches(tup.At(i).Type(), tn, depth+1, seen) {
					return true
				}
			}
		}
	}
	return false
}

// evidence is what modscan counts as speaking 2025-11-25: the legacy
// literals, and the top-level identifiers of the configured libraries'
// legacy task API.
func evidence() Evidence {
	cfg := settings.Current()
	ev := Evidence{Literals: legacyLiterals, LibraryNames: map[string]bool{}}
	for _, prefixes := range cfg.Libraries {
		ev.LibraryPrefixes = append(ev.LibraryPrefixes, prefixes...)
	}
	for _, e := range catalog.Table() {
		if !strings.Contains(e.Name, ".") {
			ev.LibraryNames[e.Name] = true
		}
	}
	return ev
}
