// Package modscan answers, from syntax alone, the question the opt-in tag
// fix needs and a pass cannot answer from its own package: does another
// package of the module still speak 2025-11-25 through this type?
//
// The analyzers see one package at a time, bottom-up, so the package that
// declares a wire type never sees the engine (another package) that still
// sends it to 2025-11-25 peers. Facts cannot flow upwards, and a driver that
// sees every package exists only in the standalone run over the whole
// module. So the declaring package's pass reads the module's other Go files
// itself (only when it is about to offer a fix), and every mode — the
// standalone driver over ./... or a package subset, go vet -vettool and go
// fix -fixtool — gets the same answer. The scan is deliberately
// conservative: syntax cannot prove that a package does not speak
// 2025-11-25, and a withheld fix is never unsafe.
package modscan

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Evidence is the syntactic evidence that a package speaks 2025-11-25.
type Evidence struct {
	// Literals are exact string literals only 2025-11-25 code uses: the
	// removed methods and the protocol version itself (code that branches
	// on it still has a 2025-11-25 path).
	Literals map[string]bool
	// LibraryPrefixes are the import path prefixes of libraries with a
	// legacy task API; LibraryNames are the identifiers of that API
	// (top-level names, methods and fields).
	LibraryPrefixes []string
	LibraryNames    map[string]bool
}

// Use is a package of the module that still speaks 2025-11-25 through the
// type asked about.
type Use struct {
	Package string // import path (or directory, if the module path is unknown)
	Why     string // "dispatches \"tasks/result\""
}

// file is one parsed Go file of the module.
type file struct {
	dir, pkgName string
	test         bool
	ast          *ast.File
	imports      map[string]string // import path → local name ("." for dot imports)
	literals     []string          // legacy literals it contains
}

// module is a parsed module tree.
type module struct {
	root, path string
	gopath     bool // root is a GOPATH src directory: import paths are relative to it
	files      []*file
	consts     map[string]map[string]string // import path → const/var name → legacy literal it holds
}

var (
	mu    sync.Mutex
	cache = map[string]*module{} // module root → parsed module
)

// ModuleRoot returns the directory of the go.mod that governs dir, or "".
func ModuleRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// LegacyUses returns the packages of the module (other than pkgPath's own
// non-test files in pkgDir, which the caller's pass analyses) that use the
// type typeName of package pkgPath — directly, through an identifier of
// pkgPath whose type contains it (carriers), or through a package that does
// — and show evidence of 2025-11-25. carriers lists the identifiers of
// pkgPath that mention the type (including typeName itself).
func LegacyUses(pkgDir, pkgPath, pkgName string, carriers map[string]bool, ev Evidence) []Use {
	root := ModuleRoot(pkgDir)
	if root != "" {
		data, _ := os.ReadFile(filepath.Join(root, "go.mod"))
		if mp := modulePath(data); pkgPath != mp && !strings.HasPrefix(pkgPath, mp+"/") {
			root = "" // not this module's package (a GOPATH tree inside a module's testdata)
		}
	}
	if root == "" {
		// GOPATH mode: the tree whose src directory holds the package.
		src, ok := strings.CutSuffix(filepath.ToSlash(pkgDir), "/"+pkgPath)
		if !ok {
			return nil
		}
		root = filepath.FromSlash(src)
	}
	m := load(root, ev)
	// Group the files by package: (dir, package name).
	type pkgKey struct{ dir, name string }
	groups := map[pkgKey][]*file{}
	var keys []pkgKey
	for _, f := range m.files {
		k := pkgKey{f.dir, f.pkgName}
		if f.dir == pkgDir && f.pkgName == pkgName && !f.test {
			continue // the package itself: its pass judges it with types
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], f)
	}
	slices.SortFunc(keys, func(a, b pkgKey) int { return strings.Compare(a.dir+"\x00"+a.name, b.dir+"\x00"+b.name) })
	importPath := func(k pkgKey) string {
		p := m.importPath(k.dir)
		if strings.HasSuffix(k.name, "_test") {
			p += "_test"
		}
		return p
	}
	// carried: import path → identifiers through which the type reaches
	// a package that imports it ("" = any identifier).
	carried := map[string]map[string]bool{pkgPath: carriers}
	var out []Use
	done := map[pkgKey]bool{}
	for changed := true; changed; {
		changed = false
		for _, k := range keys {
			if done[k] {
				continue
			}
			fs := groups[k]
			own := k.dir == pkgDir && k.name == pkgName // its in-package tests
			if !usesCarried(fs, carried) && !(own && mentions(fs, carriers)) {
				continue
			}
			done[k], changed = true, true
			path := importPath(k)
			if why := speaks(fs, m, ev); why != "" {
				out = append(out, Use{Package: path, Why: why})
			}
			if !strings.HasSuffix(k.name, "_test") && k.name != "main" {
				carried[path] = nil // any identifier of a carrier may carry the type on
			}
		}
	}
	return out
}

// usesCarried: a file of the package refers to a carried identifier of a
// package it imports.
func usesCarried(fs []*file, carried map[string]map[string]bool) bool {
	for _, f := range fs {
		for path, local := range f.imports {
			names, ok := carried[path]
			if !ok {
				continue
			}
			found := false
			ast.Inspect(f.ast, func(n ast.Node) bool {
				if found {
					return false
				}
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == local && (names == nil || names[n.Sel.Name]) {
						found = true
					}
				case *ast.Ident:
					if local == "." && (names == nil || names[n.Name]) {
						found = true
					}
				}
				return true
			})
			if found {
				return true
			}
		}
	}
	return false
}

// mentions: a file refers to one of names unqualified (in-package tests).
func mentions(fs []*file, names map[string]bool) bool {
	for _, f := range fs {
		found := false
		ast.Inspect(f.ast, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && names[id.Name] {
				found = true
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// speaks says why a package (its files) speaks 2025-11-25, or "".
func speaks(fs []*file, m *module, ev Evidence) string {
	for _, f := range fs {
		if len(f.literals) > 0 {
			if f.literals[0] == "2025-11-25" {
				return "it still negotiates protocol version \"2025-11-25\""
			}
			return "it still uses the removed method " + strconv.Quote(f.literals[0])
		}
	}
	for _, f := range fs {
		why := ""
		ast.Inspect(f.ast, func(n ast.Node) bool {
			if why != "" {
				return false
			}
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, _ := sel.X.(*ast.Ident)
			for path, local := range f.imports {
				if x != nil && x.Name == local {
					if lit, ok := m.consts[path][sel.Sel.Name]; ok {
						why = "it still uses the removed method " + strconv.Quote(lit) + " (" + x.Name + "." + sel.Sel.Name + ")"
						return false
					}
				}
				if ev.LibraryNames[sel.Sel.Name] && libraryPath(path, ev.LibraryPrefixes) {
					why = "it still uses the 2025-11-25 task API (" + sel.Sel.Name + ")"
					return false
				}
			}
			return true
		})
		if why != "" {
			return why
		}
	}
	return ""
}

func libraryPath(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// load parses the module at root once per process (the standalone driver
// analyses every package in one process; a vet tool process analyses one).
func load(root string, ev Evidence) *module {
	mu.Lock()
	defer mu.Unlock()
	if m, ok := cache[root]; ok {
		return m
	}
	m := &module{root: root, consts: map[string]map[string]string{}}
	if data, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
		m.path = modulePath(data)
	} else {
		m.gopath = true
	}
	fset := token.NewFileSet()
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		f := &file{dir: filepath.Dir(path), test: strings.HasSuffix(path, "_test.go"), imports: map[string]string{}}
		for lit := range ev.Literals {
			if bytes.Contains(src, []byte(strconv.Quote(lit))) {
				f.literals = append(f.literals, lit)
			}
		}
		slices.Sort(f.literals)
		mode := parser.SkipObjectResolution
		af, err := parser.ParseFile(fset, path, src, mode)
		if af == nil {
			return nil
		}
		f.ast, f.pkgName = af, af.Name.Name
		for _, im := range af.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				continue
			}
			local := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				local = im.Name.Name
			}
			f.imports[p] = local
		}
		m.files = append(m.files, f)
		if len(f.literals) > 0 {
			collectConsts(m, f, ev)
		}
		return nil
	})
	cache[root] = m
	return m
}

// collectConsts records the package-level constants and variables of f
// that hold a legacy literal, so that importers using them by name count.
func collectConsts(m *module, f *file, ev Evidence) {
	path := m.importPath(f.dir)
	for _, d := range f.ast.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, v := range vs.Values {
				lit, ok := ast.Unparen(v).(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING || i >= len(vs.Names) {
					continue
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && ev.Literals[s] && s != "2025-11-25" {
					if m.consts[path] == nil {
						m.consts[path] = map[string]string{}
					}
					m.consts[path][vs.Names[i].Name] = s
				}
			}
		}
	}
}

// importPath returns the import path of the package in dir.
func (m *module) importPath(dir string) string {
	rel, err := filepath.Rel(m.root, dir)
	if err != nil {
		return dir
	}
	rel = filepath.ToSlash(rel)
	switch {
	case m.gopath || m.path == "":
		return rel
	case rel == ".":
		return m.path
	}
	return m.path + "/" + rel
}

func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
