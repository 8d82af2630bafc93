package migratecheck_test

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/tasksbridge/tasksbridge/migratecheck"
)

// The checker must never crash: a package with type errors leaves
// expressions without types and objects without packages, and a driver
// that runs despite errors (-keep-going, and the importers of a broken
// package) hands every pass that partial information. These tests run the
// root analyzer, and so every pass it requires, over such packages and fail
// on any panic (which migratecheck turns into an InternalError).

// analyseGOPATH loads patterns from the GOPATH-style tree root with all
// syntax, clears IllTyped as the standalone driver does, runs the
// analyzers and returns every internal error.
func analyseGOPATH(t *testing.T, root string, patterns ...string) (internal []error, analysed int) {
	t.Helper()
	cfg := &packages.Config{
		Mode: packages.LoadAllSyntax,
		Dir:  root,
		Env:  append(os.Environ(), "GOPATH="+root, "GO111MODULE=off", "GOFLAGS=", "GOPROXY=off"),
		// analysistest does the same for its GOPATH trees.
		Tests: true,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.Types != nil && p.TypesInfo != nil {
			p.IllTyped = false
		}
	})
	graph, err := checker.Analyze(migratecheck.Analyzers(), pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for act := range graph.All() {
		if act.Analyzer != migratecheck.Analyzer {
			continue
		}
		analysed++
		var ie *migratecheck.InternalError
		if errors.As(act.Err, &ie) {
			internal = append(internal, act.Err)
		}
	}
	return internal, analysed
}

// TestTypeErrorsNoPanic: the reproducer of the nil-pointer crash (an
// undefined map indexed with the related-task key) and its siblings for the
// other passes.
func TestTypeErrorsNoPanic(t *testing.T) {
	resetConfig(t)
	root, _ := filepath.Abs(filepath.Join("testdata", "broken"))
	internal, n := analyseGOPATH(t, root, "example.com/broken/...")
	if n == 0 {
		t.Fatal("nothing analysed")
	}
	for _, e := range internal {
		t.Error(e)
	}
}

// TestMutatedTestdataNoPanic is a fuzz-style test: every example.com
// package of testdata/src is mutated (imports dropped, identifiers replaced
// by undefined ones, types replaced by undefined types), so that nearly
// every expression the passes look at has no type (each file gets two of
// the three mutations in turn), and analysed with the library stubs intact.
// Seeded, so a failure reproduces.
func TestMutatedTestdataNoPanic(t *testing.T) {
	resetConfig(t)
	src, _ := filepath.Abs(filepath.Join("testdata", "src"))
	mutators := []func(*rand.Rand, string) string{dropImports, undefineIdents, undefineTypes}
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 42))
	files := 0
	copyMutated(t, src, filepath.Join(root, "src"), func(rel, content string) string {
		if !strings.HasPrefix(rel, "example.com/") || !strings.HasSuffix(rel, ".go") {
			return content // the library stubs stay intact
		}
		files++
		for i, m := range mutators {
			if (files+i)%3 != 0 { // two of the three mutations per file
				content = m(rng, content)
			}
		}
		return content
	})
	internal, n := analyseGOPATH(t, root, "example.com/...")
	if n < 40 {
		t.Fatalf("only %d packages analysed", n)
	}
	for _, e := range internal {
		t.Error(e)
	}
}

var (
	importDecl = regexp.MustCompile(`(?ms)^import (\(.*?^\)|"[^"]*")$`)
	ident      = regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]*\b`)
	typeRef    = regexp.MustCompile(`\b(map\[string\]any|string|int64|\*int64|int|any|json\.RawMessage)\b`)
	goKeywords = map[string]bool{"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true,
		"defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true, "goto": true, "if": true,
		"import": true, "interface": true, "map": true, "package": true, "range": true, "return": true, "select": true,
		"struct": true, "switch": true, "type": true, "var": true}
)

// dropImports leaves every imported name undefined.
func dropImports(_ *rand.Rand, s string) string { return importDecl.ReplaceAllString(s, "") }

// undefineIdents replaces about one identifier in eight (outside the package
// clause) by an undefined one.
func undefineIdents(rng *rand.Rand, s string) string {
	head, body, ok := strings.Cut(s, "\npackage ")
	if !ok {
		head, body = "", strings.TrimPrefix(s, "package ")
	}
	name, rest, _ := strings.Cut(body, "\n")
	rest = ident.ReplaceAllStringFunc(rest, func(id string) string {
		if goKeywords[id] || rng.IntN(8) != 0 {
			return id
		}
		return "zzUndefined" + id
	})
	if head != "" {
		head += "\n"
	}
	return head + "package " + name + "\n" + rest
}

// undefineTypes replaces about half of the common types by undefined ones.
func undefineTypes(rng *rand.Rand, s string) string {
	return typeRef.ReplaceAllStringFunc(s, func(ty string) string {
		if rng.IntN(2) == 0 {
			return ty
		}
		return "zzUndefinedType"
	})
}

func copyMutated(t *testing.T, from, to string, edit func(rel, content string) string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(edit(filepath.ToSlash(rel), string(data))), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPanicBecomesInternalError: a pass that panics costs its package an
// InternalError naming the pass and the site, never the run.
func TestPanicBecomesInternalError(t *testing.T) {
	err := migratecheck.RecoverForTest(func() { var m map[string]*int; _ = *m["x"] })
	var ie *migratecheck.InternalError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "nil pointer dereference") || !strings.Contains(err.Error(), "robust_test.go:") {
		t.Errorf("got %v", err)
	}
}
