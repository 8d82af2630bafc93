package translate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/transcript"
)

// EnvSpecDir overrides where the checklist specs (legacy-tasks.md,
// modern-tasks.md) are read from; default ../shared/spec beside the module
// root, like the schemas.
const EnvSpecDir = "TASKSBRIDGE_SPEC_DIR"

func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
			bytes.Contains(b, []byte("module github.com/tasksbridge/tasksbridge\n")) {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod of github.com/tasksbridge/tasksbridge above %s", wd)
		}
	}
}

func specDir(t *testing.T, root string) string {
	if d := os.Getenv(EnvSpecDir); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(root), "shared", "spec")
}

var (
	legacyIDRe = regexp.MustCompile(`(?m)^\| (L-\d\d) \|`)
	modernIDRe = regexp.MustCompile(`(?m)^\* \*\*(M-\d\d) \(`)
	rowRe      = regexp.MustCompile(`^\| ([LM]-\d\d) \|`)
	txtarRe    = regexp.MustCompile(`[a-z0-9-]+\.txtar`)
	testNameRe = regexp.MustCompile("`((?:Test|Fuzz)[A-Z][A-Za-z0-9_]*)`")
	statusRe   = regexp.MustCompile(`^(translate|face \(issue [45]\)|sessionmap \(issue 3\)|rollout \(issue 7\)|n/a)( \+ (translate|face \(issue [45]\)|sessionmap \(issue 3\)|rollout \(issue 7\)))*$`)
)

func readSpecIDs(t *testing.T, path string, re *regexp.Regexp) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read checklist spec: %v (the spec is not vendored; set %s to the folder holding legacy-tasks.md and modern-tasks.md)", err, EnvSpecDir)
	}
	var ids []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		if !slices.Contains(ids, m[1]) {
			ids = append(ids, m[1])
		}
	}
	return ids
}

// testFuncs returns the names of every Test/Fuzz function in the module's
// _test.go files.
func testFuncs(t *testing.T, root string) map[string]bool {
	t.Helper()
	re := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]*)\(`)
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				names[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestConformanceMatrix checks docs/CONFORMANCE.md against the two checklists:
// every L-xx and M-xx id appears exactly once (and no other id), each row has
// a known status, rows decided by translate cite a proof, every cited
// transcript exists and lists the row's id in its "ids:" header, and every
// cited test function exists.
func TestConformanceMatrix(t *testing.T) {
	root := moduleRoot(t)
	spec := specDir(t, root)
	want := append(readSpecIDs(t, filepath.Join(spec, "legacy-tasks.md"), legacyIDRe),
		readSpecIDs(t, filepath.Join(spec, "modern-tasks.md"), modernIDRe)...)
	var nL, nM int
	for _, id := range want {
		if id[0] == 'L' {
			nL++
		} else {
			nM++
		}
	}
	if nL != 86 || nM != 68 {
		t.Errorf("spec has %d L ids and %d M ids; docs/CONFORMANCE.md says 86 and 68 — update both", nL, nM)
	}

	doc, err := os.ReadFile(filepath.Join(root, "docs", "CONFORMANCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	funcs := testFuncs(t, root)
	seen := map[string]int{}
	for i, line := range strings.Split(string(doc), "\n") {
		m := rowRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id := m[1]
		seen[id]++
		cells := splitRow(line)
		where := fmt.Sprintf("CONFORMANCE.md:%d (%s)", i+1, id)
		if len(cells) != 6 {
			t.Errorf("%s: want 6 cells (ID, Level, Requirement, Status, Where, Proof), got %d", where, len(cells))
			continue
		}
		status, impl, proof := cells[3], cells[4], cells[5]
		if !statusRe.MatchString(status) {
			t.Errorf("%s: unknown status %q", where, status)
		}
		if strings.TrimSpace(impl) == "" {
			t.Errorf("%s: empty Where cell", where)
		}
		files := txtarRe.FindAllString(proof, -1)
		tests := testNameRe.FindAllStringSubmatch(proof, -1)
		if strings.HasPrefix(status, "translate") && len(files)+len(tests) == 0 {
			t.Errorf("%s: decided by translate but cites no transcript or test", where)
		}
		for _, name := range files {
			f, err := transcript.ParseFile(filepath.Join(root, "translate", "testdata", name))
			if err != nil {
				t.Errorf("%s: cited transcript: %v", where, err)
				continue
			}
			if !slices.Contains(f.IDs(), id) {
				t.Errorf("%s: %s does not list %s in its ids: header (it lists %v)", where, name, id, f.IDs())
			}
		}
		for _, m := range tests {
			if !funcs[m[1]] {
				t.Errorf("%s: cited test %s does not exist", where, m[1])
			}
		}
	}
	for _, id := range want {
		switch seen[id] {
		case 1:
		case 0:
			t.Errorf("%s has no row in docs/CONFORMANCE.md", id)
		default:
			t.Errorf("%s has %d rows in docs/CONFORMANCE.md", id, seen[id])
		}
	}
	for id := range seen {
		if !slices.Contains(want, id) {
			t.Errorf("docs/CONFORMANCE.md has a row for %s, which is not in the spec", id)
		}
	}
	t.Logf("docs/CONFORMANCE.md: %d rows for %d L ids and %d M ids", len(seen), nL, nM)
}

// splitRow splits a markdown table row on unescaped pipes.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' && i+1 < len(line) && line[i+1] == '|' {
			cur.WriteByte('|')
			i++
			continue
		}
		if line[i] == '|' {
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(line[i])
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// TestConformanceMatrixDetectsGaps proves the matrix check can fail: a row
// removed or duplicated, or a transcript cited for an id it does not list,
// is reported by the same rules (exercised on an in-memory copy).
func TestConformanceMatrixDetectsGaps(t *testing.T) {
	rows := []string{
		"| L-01 | MUST | x | translate | here | [a.txtar](x) |",
		"| L-01 | MUST | x | translate | here | — |",
		"| L-02 | MUST | x | sometimes | here | — |",
	}
	seen := map[string]int{}
	var problems []string
	for _, r := range rows {
		m := rowRe.FindStringSubmatch(r)
		seen[m[1]]++
		cells := splitRow(r)
		if !statusRe.MatchString(cells[3]) {
			problems = append(problems, "status")
		}
		if strings.HasPrefix(cells[3], "translate") && len(txtarRe.FindAllString(cells[5], -1)) == 0 {
			problems = append(problems, "no proof")
		}
	}
	if seen["L-01"] != 2 || !slices.Contains(problems, "status") || !slices.Contains(problems, "no proof") {
		t.Fatalf("gap detection broken: seen=%v problems=%v", seen, problems)
	}
}
