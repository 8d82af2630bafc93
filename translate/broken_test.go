package translate

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/transcript"
)

// TestBrokenExpectationFails is the acceptance check that the transcript
// suite can fail: it takes real scenarios, breaks one expected output in
// memory (a status, a renamed field, an error code) and asserts the harness
// reports a mismatch with a diff. Run with -v to see the report.
func TestBrokenExpectationFails(t *testing.T) {
	s := newSuite(t)
	cases := []struct{ file, section, from, to string }{
		{"create-flat-to-nested.txtar", "legacy.out", `"status":"working"`, `"status":"completed"`},
		{"get-completed-iserror-is-failed.txtar", "legacy.out", `"status":"failed"`, `"status":"completed"`},
		{"cancel-terminal-rejected.txtar", "error.out", `-32602`, `-32603`},
		{"create-ttl-null.txtar", "legacy.out", `"ttl":null`, `"ttlMs":null`},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := transcript.ParseFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			if probs := s.Check(f); len(probs) != 0 {
				t.Fatalf("the unbroken scenario must pass first: %v", probs)
			}
			broken := f.Clone()
			want, _ := broken.Section(c.section)
			if !bytes.Contains(want, []byte(c.from)) {
				t.Fatalf("%s does not contain %s", c.section, c.from)
			}
			broken.SetSection(c.section, bytes.Replace(want, []byte(c.from), []byte(c.to), 1))
			probs := s.Check(broken)
			if len(probs) == 0 {
				t.Fatalf("broken expectation (%s → %s) was not detected", c.from, c.to)
			}
			var report []string
			for _, p := range probs {
				report = append(report, p.String())
			}
			joined := strings.Join(report, "\n")
			if !strings.Contains(joined, "mismatch (- want, + got)") {
				t.Fatalf("report has no diff:\n%s", joined)
			}
			t.Logf("harness report for the broken expectation %s → %s:\n%s", c.from, c.to, joined)
		})
	}
}

// TestEveryHandlerHasAScenario keeps the handler table and the transcripts in
// step: a handler no file uses is dead test code.
func TestEveryHandlerHasAScenario(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]int{}
	for _, p := range paths {
		f, err := transcript.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		used[f.Value("func")]++
	}
	for name := range handlers {
		if used[name] == 0 {
			t.Errorf("handler %s has no transcript", name)
		}
	}
}
