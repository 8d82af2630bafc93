package translate

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/transcript"
)

// EnvSpecDir overrides the folder the two checklist specs are read from (the
// project's spec reference, not vendored; the file names are in
// TestConformanceMatrix); by default the spec folder beside the module root,
// like the schemas.
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
	// txtarLinkRe is a cited transcript: a markdown link whose target is
	// the file's path relative to docs/.
	txtarLinkRe = regexp.MustCompile(`\[([A-Za-z0-9_.-]+\.txtar)\]\(([^)\s]+)\)`)
	txtarRe     = regexp.MustCompile(`[A-Za-z0-9_-]+\.txtar`)
	// testNameRe is a cited Go test: `TestName`, `dir.TestName` (a test
	// defined in several packages) or `TestName/Subtest`.
	testNameRe = regexp.MustCompile("`(?:([a-z0-9_/]+)\\.)?((?:Test|Fuzz)[A-Z][A-Za-z0-9_]*)(?:/([A-Za-z0-9_.-]+))?`")
	statusRe   = regexp.MustCompile(`^(translate|legacy face|modern face|sessionmap|rollout|n/a)( \+ (translate|legacy face|modern face|sessionmap|rollout))*$`)
	// notProvenRe and untestedRe are the summary's lists of ids.
	notProvenRe = regexp.MustCompile(`(?m)^Not proven: ([LM0-9, -]*) —`)
	untestedRe  = regexp.MustCompile(`\("Untested: …"\): ([LM0-9, -]*)\.`)
	summaryRe   = regexp.MustCompile(`(?m)^\| (proven by test|face-proven|not proven|n/a) \| (\d+) \| (\d+) \| (\d+) \|`)
)

// Proven column values and the summary label of each.
var provenLabels = map[string]string{"test": "proven by test", "face": "face-proven", "no": "not proven", "n/a": "n/a"}

// faceDirs hold the end-to-end proof: tests and transcripts that drive a
// real face (face/legacy, face/modern), the composition root
// (router) or the bridge binary (cmd/bridge).
var faceDirs = []string{"face/legacy", "face/modern", "router", "cmd/bridge"}

func isFaceDir(dir string) bool {
	for _, d := range faceDirs {
		if dir == d || strings.HasPrefix(dir, d+"/") {
			return true
		}
	}
	return false
}

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

// repo is what the matrix check knows about the module: where each Test or
// Fuzz function is defined, and the Go source (for subtest names).
type repo struct {
	root   string
	funcs  map[string][]string // function name → module-relative dirs of the _test.go files defining it
	source []byte              // every .go file, concatenated
}

func loadRepo(t *testing.T, root string) *repo {
	t.Helper()
	re := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]*)\(`)
	r := &repo{root: root, funcs: map[string][]string{}}
	var src bytes.Buffer
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		src.Write(b)
		if strings.HasSuffix(p, "_test.go") {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			rel = filepath.ToSlash(rel)
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				if !slices.Contains(r.funcs[m[1]], rel) {
					r.funcs[m[1]] = append(r.funcs[m[1]], rel)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r.source = src.Bytes()
	return r
}

// matrix is the outcome of checking docs/CONFORMANCE.md.
type matrix struct {
	problems []string
	seen     map[string]int          // rows per id
	proven   map[string]map[byte]int // Proven value → era ('L'/'M') → rows
	gaps     map[string][]string     // Proven value → ids (for the log)
	untested []string                // rows whose Where cell names an untested sub-point
}

func (m *matrix) errorf(format string, a ...any) {
	m.problems = append(m.problems, fmt.Sprintf(format, a...))
}

// checkMatrix applies every rule of TestConformanceMatrix to doc, a
// docs/CONFORMANCE.md text, except the comparison with the spec's ids.
func checkMatrix(doc string, r *repo) *matrix {
	m := &matrix{seen: map[string]int{}, proven: map[string]map[byte]int{}, gaps: map[string][]string{}}
	for v := range provenLabels {
		m.proven[v] = map[byte]int{}
	}
	for i, line := range strings.Split(doc, "\n") {
		mm := rowRe.FindStringSubmatch(line)
		if mm == nil {
			continue
		}
		id := mm[1]
		m.seen[id]++
		cells := splitRow(line)
		where := fmt.Sprintf("CONFORMANCE.md:%d (%s)", i+1, id)
		if len(cells) != 7 {
			m.errorf("%s: want 7 cells (ID, Level, Requirement, Status, Where, Proof, Proven), got %d", where, len(cells))
			continue
		}
		status, impl, proof, proven := cells[3], cells[4], cells[5], cells[6]
		if strings.Contains(impl, "Untested:") {
			m.untested = append(m.untested, id)
		}
		if !statusRe.MatchString(status) {
			m.errorf("%s: unknown status %q", where, status)
		}
		if strings.TrimSpace(impl) == "" {
			m.errorf("%s: empty Where cell", where)
		}
		if _, ok := provenLabels[proven]; !ok {
			m.errorf("%s: Proven is %q; want test, face, no or n/a", where, proven)
			continue
		}
		m.proven[proven][id[0]]++
		m.gaps[proven] = append(m.gaps[proven], id)

		cited, face := 0, false
		links := txtarLinkRe.FindAllStringSubmatch(proof, -1)
		if txtarRe.MatchString(txtarLinkRe.ReplaceAllString(proof, "")) {
			m.errorf("%s: cite every transcript as a link to its file ([x.txtar](../dir/testdata/x.txtar))", where)
		}
		for _, l := range links {
			name, target := l[1], l[2]
			rel := filepath.ToSlash(filepath.Clean(filepath.Join("docs", filepath.FromSlash(target))))
			if path.Base(rel) != name || strings.HasPrefix(rel, "../") {
				m.errorf("%s: link [%s](%s) does not point at a file of that name in the module", where, name, target)
				continue
			}
			f, err := transcript.ParseFile(filepath.Join(r.root, filepath.FromSlash(rel)))
			if err != nil {
				m.errorf("%s: cited transcript: %v", where, err)
				continue
			}
			cited++
			dir := path.Dir(path.Dir(rel)) // the package holding testdata/
			face = face || isFaceDir(dir)
			// Every transcript of this module has an ids: header; one
			// outside translate/ without it is accepted unchecked.
			if ids := f.IDs(); !slices.Contains(ids, id) && (len(ids) > 0 || strings.HasPrefix(rel, "translate/")) {
				m.errorf("%s: %s does not list %s in its ids: header (it lists %v)", where, rel, id, ids)
			}
		}
		for _, tm := range testNameRe.FindAllStringSubmatch(proof, -1) {
			qual, name, sub := tm[1], tm[2], tm[3]
			dirs := r.funcs[name]
			switch {
			case len(dirs) == 0:
				m.errorf("%s: cited test %s does not exist", where, name)
				continue
			case qual != "" && !slices.Contains(dirs, qual):
				m.errorf("%s: cited test %s.%s: %s is defined in %v", where, qual, name, name, dirs)
				continue
			case qual == "" && len(dirs) > 1:
				m.errorf("%s: cited test %s is defined in %v; cite it as `dir.%s`", where, name, dirs, name)
				continue
			}
			if sub != "" && !bytes.Contains(r.source, []byte(`"`+sub+`"`)) {
				m.errorf("%s: cited subtest %s/%s: no subtest named %q in the module", where, name, sub, sub)
				continue
			}
			if qual != "" {
				dirs = []string{qual}
			}
			cited++
			face = face || isFaceDir(dirs[0])
		}

		switch proven {
		case "test":
			if cited == 0 {
				m.errorf("%s: Proven is test but the row cites no transcript or test", where)
			}
		case "face":
			if !face {
				m.errorf("%s: Proven is face but the row cites no transcript or test of %v", where, faceDirs)
			}
		case "no":
			if !strings.HasPrefix(proof, "not proven") {
				m.errorf("%s: Proven is no: the Proof cell must start with \"not proven\" and say why and what would prove it", where)
			}
		case "n/a":
			if status != "n/a" {
				m.errorf("%s: Proven is n/a but the status is %q", where, status)
			}
		}
		if status == "n/a" && proven != "n/a" {
			m.errorf("%s: status n/a but Proven is %q", where, proven)
		}
		if strings.HasPrefix(status, "translate") && cited == 0 {
			m.errorf("%s: decided by translate but cites no transcript or test", where)
		}
	}

	// The summary table must agree with the rows.
	got := map[string][3]int{}
	for _, s := range summaryRe.FindAllStringSubmatch(doc, -1) {
		var v [3]int
		for k := range v {
			v[k], _ = strconv.Atoi(s[2+k])
		}
		got[s[1]] = v
	}
	for v, label := range provenLabels {
		want := [3]int{m.proven[v]['L'], m.proven[v]['M'], m.proven[v]['L'] + m.proven[v]['M']}
		if g, ok := got[label]; !ok || g != want {
			m.errorf("summary row %q says %v (L, M, total); the rows say %v", label, g, want)
		}
	}
	// So must the lists of ids it names.
	for _, l := range []struct {
		re   *regexp.Regexp
		what string
		ids  []string
	}{{notProvenRe, "Not proven", m.gaps["no"]}, {untestedRe, "Untested", m.untested}} {
		mm := l.re.FindStringSubmatch(doc)
		var listed []string
		if mm != nil {
			listed = strings.FieldsFunc(mm[1], func(r rune) bool { return r == ',' || r == ' ' })
		}
		if len(l.ids) > 0 && !slices.Equal(listed, l.ids) {
			m.errorf("the summary's %s list says %v; the rows say %v", l.what, listed, l.ids)
		}
	}
	return m
}

// TestConformanceMatrix checks docs/CONFORMANCE.md against the two checklists:
// every L-xx and M-xx id appears exactly once (and no other id); each row has
// a known status and a Proven value (test, face, no, n/a) that its Proof cell
// supports: every cited transcript (a link to its file, in any package)
// exists and lists the row's id in its "ids:" header, every cited test
// function (or subtest) exists, "face" rows cite end-to-end proof, "no" rows
// say why; and the summary counts match the rows.
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
	m := checkMatrix(string(doc), loadRepo(t, root))
	for _, p := range m.problems {
		t.Error(p)
	}
	for _, id := range want {
		switch m.seen[id] {
		case 1:
		case 0:
			t.Errorf("%s has no row in docs/CONFORMANCE.md", id)
		default:
			t.Errorf("%s has %d rows in docs/CONFORMANCE.md", id, m.seen[id])
		}
	}
	for id := range m.seen {
		if !slices.Contains(want, id) {
			t.Errorf("docs/CONFORMANCE.md has a row for %s, which is not in the spec", id)
		}
	}
	t.Logf("docs/CONFORMANCE.md: %d rows for %d L ids and %d M ids", len(m.seen), nL, nM)
	for _, v := range []string{"test", "face", "no", "n/a"} {
		t.Logf("%s: %d %v", provenLabels[v], len(m.gaps[v]), m.gaps[v])
	}
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

// TestConformanceMatrixDetectsGaps proves the matrix check can fail: each
// broken row of an in-memory document is reported by the rule it breaks.
func TestConformanceMatrixDetectsGaps(t *testing.T) {
	root := moduleRoot(t)
	r := loadRepo(t, root)
	summary := func(test, face, no, na int) string {
		return fmt.Sprintf("| proven by test | %d | 0 | %d |\n| face-proven | %d | 0 | %d |\n| not proven | %d | 0 | %d |\n| n/a | %d | 0 | %d |\n",
			test, test, face, face, no, no, na, na)
	}
	good := "| L-01 | MUST | x | translate | here | [initialize-from-discover.txtar](../translate/testdata/initialize-from-discover.txtar) | test |\n"
	if m := checkMatrix(good+summary(1, 0, 0, 0), r); len(m.problems) != 0 {
		t.Fatalf("a correct row was refused: %v", m.problems)
	}
	for _, tc := range []struct {
		name, rows, want string
	}{
		{"six cells", "| L-01 | MUST | x | translate | here | `TestConformanceMatrix` |\n", "want 7 cells"},
		{"status", "| L-01 | MUST | x | sometimes | here | `TestConformanceMatrix` | test |\n", "unknown status"},
		{"proven value", "| L-01 | MUST | x | translate | here | `TestConformanceMatrix` | yes |\n", "want test, face, no or n/a"},
		{"no proof", "| L-01 | MUST | x | translate | here | — | test |\n", "cites no transcript or test"},
		{"bare transcript", "| L-01 | MUST | x | translate | here | initialize-from-discover.txtar | test |\n", "as a link"},
		{"missing transcript", "| L-01 | MUST | x | translate | here | [nope.txtar](../translate/testdata/nope.txtar) | test |\n", "cited transcript"},
		{"transcript of another id", "| L-02 | MUST | x | translate | here | [cancel-terminal-rejected.txtar](../translate/testdata/cancel-terminal-rejected.txtar) | test |\n", "does not list L-02"},
		{"face transcript of another id", "| L-02 | MUST | x | legacy face | here | [list.txtar](../face/legacy/testdata/list.txtar) | face |\n", "does not list L-02"},
		{"missing test", "| L-01 | MUST | x | translate | here | `TestNoSuchThing` | test |\n", "does not exist"},
		{"ambiguous test", "| L-01 | MUST | x | translate | here | `TestTranscripts` | test |\n", "cite it as"},
		{"wrong package", "| L-01 | MUST | x | translate | here | `face/modern.TestConformanceMatrix` | test |\n", "is defined in"},
		{"missing subtest", "| L-01 | MUST | x | sessionmap | here | `TestMemoryConformance/NoSuchSubtest` | test |\n", "no subtest"},
		{"face without face proof", "| L-01 | MUST | x | translate | here | `TestConformanceMatrix` | face |\n", "cites no transcript or test of"},
		{"no without reason", "| L-01 | MUST | x | legacy face | here | — | no |\n", "must start with"},
		{"n/a mismatch", "| L-01 | MUST | x | legacy face | here | — | n/a |\n", "Proven is n/a"},
	} {
		m := checkMatrix(tc.rows, r)
		if !slices.ContainsFunc(m.problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
			t.Errorf("%s: problems %q, want one containing %q", tc.name, m.problems, tc.want)
		}
	}
	// A not-proven row missing from the summary's list.
	no := "| L-72 | SHOULD | x | legacy face | here | not proven: not implemented | no |\n"
	if m := checkMatrix(no+summary(0, 0, 1, 0)+"\nNot proven: L-73 — why\n", r); !slices.ContainsFunc(m.problems, func(p string) bool { return strings.Contains(p, "Not proven list") }) {
		t.Errorf("a wrong Not proven list passed: %v", m.problems)
	}
	// Counts that disagree with the rows.
	if m := checkMatrix(good+summary(0, 1, 0, 0), r); !slices.ContainsFunc(m.problems, func(p string) bool { return strings.Contains(p, "summary row") }) {
		t.Errorf("a wrong summary passed: %v", m.problems)
	}
	// Proof in a face package counts as face proof, qualified or not.
	face := "| L-40 | SHOULD NOT | x | legacy face | here | `TestTasksGetIsJSON_L40`, `face/legacy.TestTranscripts` | face |\n"
	if m := checkMatrix(face+summary(0, 1, 0, 0), r); len(m.problems) != 0 {
		t.Errorf("face proof refused: %v", m.problems)
	}
}
