// Package libs maps packages and objects to the library families of the
// library API table (migratecheck/internal/catalog): which configured family a package path belongs to, the
// stable table key of an object ("mcp.Task.TTL", "client.Client.TaskResult"),
// and the feature probe that tells which library version is in use.
package libs

import (
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Display names of the families, used in messages.
var Display = map[string]string{
	settings.FamilyMCPGo:     "mcp-go",
	settings.FamilyGoSDK:     "go-sdk",
	settings.FamilyMCPKit:    "mcpkit",
	settings.FamilyFineMCP:   "finemcp",
	settings.FamilyAppTheory: "apptheory",
	settings.FamilyTMC:       "tmc/mcp",
}

// Match returns the family of a package path and its path below the matched
// prefix ("" for the prefix itself), choosing the longest matching prefix.
// The FamilyModern family is never returned (see IsModern).
func Match(cfg *settings.Snapshot, path string) (family, sub string, ok bool) {
	best := -1
	for fam, prefixes := range cfg.Libraries {
		if fam == settings.FamilyModern {
			continue
		}
		for _, p := range prefixes {
			var rest string
			switch {
			case path == p:
			case strings.HasPrefix(path, p+"/"):
				rest = path[len(p)+1:]
			default:
				continue
			}
			if len(p) > best || (len(p) == best && fam < family) {
				best, family, sub = len(p), fam, rest
			}
		}
	}
	return family, sub, best >= 0
}

// IsLibrary reports whether path belongs to any configured library family.
func IsLibrary(cfg *settings.Snapshot, path string) bool {
	_, _, ok := Match(cfg, path)
	return ok
}

// IsModern reports whether path is at or below a FamilyModern prefix: a
// package that implements the tasks extension.
func IsModern(cfg *settings.Snapshot, path string) bool {
	for _, p := range cfg.Libraries[settings.FamilyModern] {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// Keyer computes table keys of objects: "Name" for package-level objects,
// "Type.Method" for methods and "Type.Field" for fields of package-level
// named struct types (through aliases and generic origins). It caches the
// field owners of each package it sees; use one Keyer per pass.
type Keyer struct {
	owners  map[*types.Package]map[*types.Var]string
	matches map[*types.Package]match
}

type match struct {
	family, sub string
	ok          bool
}

// Match is Match for a package, cached: the library analyzers resolve
// every identifier they see, so the prefix scan runs once per package.
func (k *Keyer) Match(cfg *settings.Snapshot, pkg *types.Package) (family, sub string, ok bool) {
	if k.matches == nil {
		k.matches = map[*types.Package]match{}
	}
	m, seen := k.matches[pkg]
	if !seen {
		m.family, m.sub, m.ok = Match(cfg, pkg.Path())
		k.matches[pkg] = m
	}
	return m.family, m.sub, m.ok
}

// Key returns the key of obj within its package, or "" if obj has none (for
// example a field of an anonymous struct or a local variable).
func (k *Keyer) Key(obj types.Object) string {
	switch o := obj.(type) {
	case *types.TypeName:
		if o.IsAlias() {
			if n, ok := types.Unalias(o.Type()).(*types.Named); ok {
				return k.Key(n.Obj())
			}
			return ""
		}
		if o.Pkg() == nil || o.Parent() != o.Pkg().Scope() {
			return ""
		}
		return o.Name()
	case *types.Func:
		o = o.Origin()
		sig, _ := o.Type().(*types.Signature)
		if sig != nil && sig.Recv() != nil {
			t := sig.Recv().Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			if n, ok := types.Unalias(t).(*types.Named); ok {
				return n.Obj().Name() + "." + o.Name()
			}
			return ""
		}
		if o.Pkg() == nil || o.Parent() != o.Pkg().Scope() {
			return ""
		}
		return o.Name()
	case *types.Var:
		o = o.Origin()
		if o.IsField() {
			return k.owner(o)
		}
		if o.Pkg() == nil || o.Parent() != o.Pkg().Scope() {
			return ""
		}
		return o.Name()
	case *types.Const:
		if o.Pkg() == nil || o.Parent() != o.Pkg().Scope() {
			return ""
		}
		return o.Name()
	}
	return ""
}

// Target returns the object an alias-like object stands for: the named
// type's TypeName for a type alias, else obj itself.
func Target(obj types.Object) types.Object {
	if tn, ok := obj.(*types.TypeName); ok && tn.IsAlias() {
		if n, ok := types.Unalias(tn.Type()).(*types.Named); ok {
			return n.Obj()
		}
	}
	return obj
}

func (k *Keyer) owner(v *types.Var) string {
	pkg := v.Pkg()
	if pkg == nil {
		return ""
	}
	if k.owners == nil {
		k.owners = map[*types.Package]map[*types.Var]string{}
	}
	m, ok := k.owners[pkg]
	if !ok {
		m = map[*types.Var]string{}
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			st, ok := tn.Type().Underlying().(*types.Struct)
			if !ok {
				continue
			}
			for i := 0; i < st.NumFields(); i++ {
				m[st.Field(i)] = tn.Name() + "." + st.Field(i).Name()
			}
		}
		k.owners[pkg] = m
	}
	return m[v]
}

// Features is the result of the feature probe: which modern APIs the
// library versions imported by the package provide. mcp-go gained its
// extension-side APIs in v1.0.0-beta.1 (server.WithExtensions,
// mcp.ServerCapabilities.Extensions), client.WaitForTask in v1.0.0; go-sdk
// gained ServerCapabilities.AddExtension in v1.4.0.
type Features struct {
	Library             bool // some configured library (or modern) package is imported, directly or one level down
	MCPGo               bool // an mcp-go package is imported
	MCPGoExtensions     bool // server.WithExtensions or mcp.ServerCapabilities.Extensions exists
	MCPGoResultTypeTask bool // mcp.ResultTypeTask exists (a future mcp-go may implement the extension)
	MCPGoWaitForTask    bool // client.Client.WaitForTask exists
	// MCPGoExtProbed / MCPGoWaitProbed: the package scope that answers
	// MCPGoExtensions (server or mcp) / MCPGoWaitForTask (client) was
	// visible, so the answer is the API's, not a guess from go.mod.
	MCPGoExtProbed, MCPGoWaitProbed bool
	GoSDK                           bool // a go-sdk package is imported
	GoSDKAddExtension               bool // go-sdk mcp.ServerCapabilities.AddExtension exists
	Modern                          bool // a FamilyModern package is imported
}

// Probe inspects the packages imported by pkg (directly, and one level
// further for library packages) through the type checker's package scopes.
func Probe(cfg *settings.Snapshot, pkg *types.Package) Features {
	var f Features
	seen := map[*types.Package]bool{}
	var visit func(p *types.Package, depth int)
	visit = func(p *types.Package, depth int) {
		if seen[p] {
			return
		}
		seen[p] = true
		if IsModern(cfg, p.Path()) {
			f.Modern, f.Library = true, true
		}
		fam, sub, ok := Match(cfg, p.Path())
		if ok {
			f.Library = true
		}
		if depth < 1 {
			for _, imp := range p.Imports() {
				visit(imp, depth+1)
			}
		}
		if !ok {
			return
		}
		scope := p.Scope()
		switch fam {
		case settings.FamilyMCPGo:
			f.MCPGo = true
			switch sub {
			case "server":
				f.MCPGoExtProbed = true
				if scope.Lookup("WithExtensions") != nil {
					f.MCPGoExtensions = true
				}
			case "mcp":
				f.MCPGoExtProbed = true
				if hasField(scope, "ServerCapabilities", "Extensions") {
					f.MCPGoExtensions = true
				}
				if scope.Lookup("ResultTypeTask") != nil {
					f.MCPGoResultTypeTask = true
				}
			case "client":
				f.MCPGoWaitProbed = true
				if hasMethod(scope, "Client", "WaitForTask") {
					f.MCPGoWaitForTask = true
				}
			}
		case settings.FamilyGoSDK:
			f.GoSDK = true
			if sub == "mcp" && hasMethod(scope, "ServerCapabilities", "AddExtension") {
				f.GoSDKAddExtension = true
			}
		}
	}
	for _, imp := range pkg.Imports() {
		visit(imp, 0)
	}
	return f
}

func hasField(scope *types.Scope, typeName, field string) bool {
	tn, ok := scope.Lookup(typeName).(*types.TypeName)
	if !ok {
		return false
	}
	st, ok := tn.Type().Underlying().(*types.Struct)
	if !ok {
		return false
	}
	for i := 0; i < st.NumFields(); i++ {
		if st.Field(i).Name() == field {
			return true
		}
	}
	return false
}

func hasMethod(scope *types.Scope, typeName, method string) bool {
	tn, ok := scope.Lookup(typeName).(*types.TypeName)
	if !ok {
		return false
	}
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), false, tn.Pkg(), method)
	_, isFunc := obj.(*types.Func)
	return isFunc
}

// modCache caches parsed go.mod requirements by directory.
var modCache sync.Map // dir → *modInfo

type modInfo struct {
	path     string
	requires map[string]string // module path → version (after replace directives)
}

// RequiredVersion returns the version of the module at prefix (for example
// "github.com/mark3labs/mcp-go") that the go.mod of the package's own module
// requires, or "" if it cannot tell (no go.mod above the package's files, a
// go.mod of another module, a local replace). dir is the directory of one
// of the package's files; pkgPath its import path.
func RequiredVersion(dir, pkgPath, prefix string) string {
	for d := dir; ; {
		mi := readMod(d)
		if mi != nil {
			if mi.path != pkgPath && !strings.HasPrefix(pkgPath, mi.path+"/") {
				return "" // a go.mod of another module (GOPATH-style layout)
			}
			return mi.requires[prefix]
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

func readMod(dir string) *modInfo {
	if v, ok := modCache.Load(dir); ok {
		return v.(*modInfo)
	}
	var mi *modInfo
	name := filepath.Join(dir, "go.mod")
	if data, err := os.ReadFile(name); err == nil {
		if f, err := modfile.Parse(name, data, nil); err == nil && f.Module != nil {
			mi = &modInfo{path: f.Module.Mod.Path, requires: map[string]string{}}
			for _, r := range f.Require {
				mi.requires[r.Mod.Path] = r.Mod.Version
			}
			for _, r := range f.Replace {
				if _, ok := mi.requires[r.Old.Path]; ok && (r.Old.Version == "" || r.Old.Version == mi.requires[r.Old.Path]) {
					mi.requires[r.Old.Path] = r.New.Version // "" for a local directory: unknown
				}
			}
		}
	}
	modCache.Store(dir, mi)
	return mi
}

// AtLeast reports whether version v is known and not older than min.
func AtLeast(v, min string) bool {
	return semver.IsValid(v) && semver.Compare(v, min) >= 0
}
