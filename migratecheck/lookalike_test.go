package migratecheck_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// libraryRoots are the stubbed library module paths under testdata/src.
var libraryRoots = []string{
	"github.com/mark3labs/mcp-go",
	"github.com/panyam/mcpkit",
	"github.com/finemcp/finemcp",
	"github.com/theory-cloud/apptheory",
	"github.com/tmc/mcp",
}

// usePackages are the positive packages that use every catalogue identifier.
var usePackages = []string{"mcpgouse", "mcpkituse", "fineuse", "apptheoryuse", "tmcuse"}

var wantRe = regexp.MustCompile(`\s*// want .*$`)

// copyTree copies src to dst, applying edit to each .go / .golden file.
func copyTree(t *testing.T, src, dst string, edit func(string) string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(edit(string(data))), 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

func stripWants(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = wantRe.ReplaceAllString(l, "")
	}
	return strings.Join(lines, "\n")
}

func rewriteImports(s, from, to string) string {
	return strings.ReplaceAll(s, `"`+from, `"`+to+from)
}

// TestLookalikesForksAndIdempotence builds a GOPATH tree in a temp dir with
//   - lookalike copies of every stubbed library under example.com/lookalike/,
//     and copies of the positive packages importing them with every want
//     removed: the same identifiers from a non-library package must produce
//     no finding at all (one negative per catalogue identifier);
//   - a fork of mcp-go under example.com/fork/, configured through
//     Configure, with a copy of the mcp-go positives importing it: every
//     expectation must still hold (configurable path prefixes);
//   - the .golden outputs of the fix tests as ordinary packages, analyzed
//     with the fixes enabled: fixed code is not flagged again (idempotence).
func TestLookalikesForksAndIdempotence(t *testing.T) {
	resetConfig(t)
	src := filepath.Join(analysistest.TestData(), "src")
	root := t.TempDir()
	dst := filepath.Join(root, "src")
	copyTree(t, src, dst, func(s string) string { return s })
	const look = "example.com/lookalike/"
	for _, lib := range libraryRoots {
		copyTree(t, filepath.Join(src, lib), filepath.Join(dst, look+lib), func(s string) string {
			for _, l := range libraryRoots {
				s = rewriteImports(s, l, look)
			}
			return s
		})
	}
	for _, p := range usePackages {
		copyTree(t, filepath.Join(src, "example.com", p), filepath.Join(dst, "example.com/neg", p), func(s string) string {
			for _, l := range libraryRoots {
				s = rewriteImports(s, l, look)
			}
			return stripWants(s)
		})
	}
	const fork = "example.com/fork/"
	copyTree(t, filepath.Join(src, "github.com/mark3labs/mcp-go"), filepath.Join(dst, fork+"mcp-go"), func(s string) string {
		return strings.ReplaceAll(s, `"github.com/mark3labs/mcp-go`, `"`+fork+"mcp-go")
	})
	copyTree(t, filepath.Join(src, "example.com/mcpgouse"), filepath.Join(dst, "example.com/forkuse"), func(s string) string {
		return strings.ReplaceAll(s, `"github.com/mark3labs/mcp-go`, `"`+fork+"mcp-go")
	})
	for _, p := range []string{"tags", "literals"} {
		data, err := os.ReadFile(filepath.Join(src, "example.com/fixes", p, p+".go.golden"))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dst, "example.com/fixed", p, p+".go")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, []byte(stripWants(string(data))), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	s := settings.Default()
	s.Libraries[settings.FamilyMCPGo] = []string{"github.com/mark3labs/mcp-go", "example.com/fork/mcp-go"}
	s.FixTags, s.FixLiterals = true, true
	if err := migratecheck.Configure(s); err != nil {
		t.Fatal(err)
	}
	results := analysistest.Run(t, root, migratecheck.Analyzer, "example.com/neg/...", "example.com/forkuse", "example.com/fixed/...")
	if len(results) < len(usePackages)+3 {
		t.Fatalf("analyzed %d packages, want at least %d", len(results), len(usePackages)+3)
	}
	forkFindings := 0
	for _, r := range results {
		if r.Pass.Pkg.Path() == "example.com/forkuse" {
			forkFindings = len(r.Diagnostics)
		}
	}
	if forkFindings < 50 {
		t.Errorf("fork of mcp-go produced %d findings, want the full positive set (>= 50)", forkFindings)
	}
}
