package driver

// The realistic corpus (../testdata/realistic) is a set of small Go modules
// written for this test — an mcp-go server, an mcp-go client, a raw JSON-RPC
// gateway, a CLI, a task-helper library that lives under mcp-go's module
// path, and a storage layer — with the legacy shapes and the false-positive
// traps seen on real codebases. Expected findings are marked on their line:
//
//	// want MCP001 MCP004:info MCP006+fix
//
// (rule, optionally ":severity" that must match, optionally "+fix" when the
// finding must offer a fix; a finding with a fix where "+fix" is absent
// counts as a wrong fix). Files without a "want" are negatives: any finding
// in them is a false positive. The test prints recall and precision and fails
// below the thresholds.

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Thresholds for the realistic corpus (docs/PERFORMANCE.md has the figures).
const (
	minRecall    = 0.95
	minPrecision = 0.95
)

type corpusKey struct {
	file string // relative to the corpus root, slash-separated
	line int
	rule string
}

// newCorpusKey keys a finding by file, line and rule. MCP014 too: it is one
// claim about a package, reported at its first advertisement or engine use
// by file name and line, the same position in every run.
func newCorpusKey(file string, line int, rule string) corpusKey {
	return corpusKey{file, line, rule}
}

type corpusWant struct {
	severity string // "" = any
	fix      bool
}

var (
	wantComment = regexp.MustCompile(`// want((?:\s+MCP\d{3}(?::[a-z]+)?(?:\+fix)?)+)\s*$`)
	wantItem    = regexp.MustCompile(`^(MCP\d{3})(?::([a-z]+))?(\+fix)?$`)
)

// readCorpus returns the expectations and the list of Go files per module.
func readCorpus(t *testing.T, root string) (wants map[corpusKey]corpusWant, files []string, modules []string) {
	t.Helper()
	wants = map[corpusKey]corpusWant{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == "go.mod" {
			modules = append(modules, filepath.Dir(path))
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		files = append(files, rel)
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			m := wantComment.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			for _, item := range strings.Fields(m[1]) {
				p := wantItem.FindStringSubmatch(item)
				wants[newCorpusKey(rel, n, p[1])] = corpusWant{severity: p[2], fix: p[3] != ""}
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return wants, files, modules
}

func TestRealisticCorpus(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "testdata", "realistic"))
	if err != nil {
		t.Fatal(err)
	}
	// The modules depend on mcp-go v1.2.1 from the module cache (as the
	// cmd/migrate-check end-to-end tests do); never the network.
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")

	wants, files, modules := readCorpus(t, root)
	type got struct {
		severity string
		fix      bool
		msg      string
	}
	gots := map[corpusKey]got{}
	for _, mod := range modules {
		// Fixes are computed only for the opt-in fix flags.
		on := true
		res, err := Analyze(Options{Dir: mod, ConfigPath: "none", Stdout: io.Discard, Stderr: io.Discard,
			Overrides: settings.Overrides{FixTags: &on, FixLiterals: &on}})
		if err != nil {
			t.Fatalf("%s: %v", mod, err)
		}
		if len(res.Errors) > 0 {
			t.Fatalf("%s does not load:\n%s", mod, strings.Join(res.Errors, "\n"))
		}
		for _, f := range res.Findings {
			if f.Suppressed {
				continue
			}
			rel, err := filepath.Rel(root, f.Pos.Filename)
			if err != nil {
				t.Fatal(err)
			}
			k := newCorpusKey(filepath.ToSlash(rel), f.Pos.Line, f.Rule)
			g := gots[k]
			g.severity, g.msg = string(f.Severity), f.Message
			g.fix = g.fix || len(f.Fixes) > 0
			gots[k] = g
		}
	}

	var tp, fn, fp, wrongSev, wrongFix int
	var report []string
	for _, k := range sortedCorpusKeys(wants) {
		w := wants[k]
		g, ok := gots[k]
		switch {
		case !ok:
			fn++
			report = append(report, fmt.Sprintf("MISSED   %s:%d: %s", k.file, k.line, k.rule))
		case w.severity != "" && g.severity != w.severity:
			fn++
			fp++
			wrongSev++
			report = append(report, fmt.Sprintf("SEVERITY %s:%d: %s is %s, want %s: %s", k.file, k.line, k.rule, g.severity, w.severity, g.msg))
		default:
			tp++
		}
		if ok && g.fix != w.fix {
			wrongFix++
			report = append(report, fmt.Sprintf("FIX      %s:%d: %s offers a fix: %v, want %v", k.file, k.line, k.rule, g.fix, w.fix))
		}
	}
	for _, k := range sortedCorpusKeys(gots) {
		if _, ok := wants[k]; !ok {
			fp++
			report = append(report, fmt.Sprintf("FALSE    %s:%d: %s (%s): %s", k.file, k.line, k.rule, gots[k].severity, gots[k].msg))
		}
	}

	// Negative files: no expectation; silent: no finding either.
	withWant := map[string]bool{}
	for k := range wants {
		withWant[k.file] = true
	}
	negatives, cleanNegatives := 0, 0
	for _, f := range files {
		if withWant[f] {
			continue
		}
		negatives++
		if !slices.ContainsFunc(sortedCorpusKeys(gots), func(k corpusKey) bool { return k.file == f }) {
			cleanNegatives++
		}
	}

	// Per module (each holds a group of shapes): the same figures.
	type score struct{ tp, fn, fp int }
	perModule := map[string]*score{}
	module := func(file string) *score {
		m, _, _ := strings.Cut(file, "/")
		if perModule[m] == nil {
			perModule[m] = &score{}
		}
		return perModule[m]
	}
	for k, w := range wants {
		g, ok := gots[k]
		sc := module(k.file)
		switch {
		case !ok:
			sc.fn++
		case w.severity != "" && g.severity != w.severity:
			sc.fn++
			sc.fp++
		default:
			sc.tp++
		}
	}
	for k := range gots {
		if _, ok := wants[k]; !ok {
			module(k.file).fp++
		}
	}
	for _, m := range slices.Sorted(maps.Keys(perModule)) {
		sc := perModule[m]
		t.Logf("  %-12s recall %5.1f%% (%d/%d), precision %5.1f%% (%d/%d)", m,
			100*float64(sc.tp)/float64(max(sc.tp+sc.fn, 1)), sc.tp, sc.tp+sc.fn,
			100*float64(sc.tp)/float64(max(sc.tp+sc.fp, 1)), sc.tp, sc.tp+sc.fp)
	}

	recall := float64(tp) / float64(max(tp+fn, 1))
	precision := float64(tp) / float64(max(tp+fp, 1))
	for _, line := range report {
		t.Log(line)
	}
	t.Logf("realistic corpus: %d modules, %d expected findings, %d negative files (%d silent); "+
		"recall %.1f%% (%d/%d), precision %.1f%% (%d/%d), %d wrong severities, %d wrong fixes",
		len(modules), len(wants), negatives, cleanNegatives,
		100*recall, tp, tp+fn, 100*precision, tp, tp+fp, wrongSev, wrongFix)

	if len(wants) < 60 || negatives < 15 {
		t.Errorf("corpus too small: %d expected findings (want ≥ 60), %d negative files (want ≥ 15)", len(wants), negatives)
	}
	if recall < minRecall || precision < minPrecision {
		t.Errorf("recall %.1f%% / precision %.1f%%, want ≥ %.0f%% / ≥ %.0f%%", 100*recall, 100*precision, 100*minRecall, 100*minPrecision)
	}
	if wrongFix > 0 {
		t.Errorf("%d findings offer a fix where none is safe, or lack the expected one", wrongFix)
	}
}

func sortedCorpusKeys[V any](m map[corpusKey]V) []corpusKey {
	keys := make([]corpusKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b corpusKey) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.line, b.line), cmp.Compare(a.rule, b.rule))
	})
	return keys
}
