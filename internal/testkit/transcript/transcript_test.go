package transcript

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
)

func echo(f *File) (Output, error) {
	in, err := f.Messages("legacy.in")
	if err != nil {
		return nil, err
	}
	return Output{"legacy.out": in}, nil
}

// okValidator accepts everything except messages containing "INVALID".
func okValidator(schema, def string, msg []byte) error {
	if strings.Contains(string(msg), "INVALID") {
		return errors.New("rejected by fake validator")
	}
	return nil
}

const sample = `# A sample.
# Second prose line.
func: echo
ids: L-01, L-02 M-03
schema legacy.in: legacy Task
schema legacy.out: legacy Task
schema legacy.out[1]: legacy GetTaskResult
-- legacy.in --
{"a":1}
{"b":[1,2]}
-- legacy.out --
{"a":1.0}
{"b":[1,2]}
`

func TestParseHeaderAndSections(t *testing.T) {
	f, err := Parse("sample.txtar", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if f.Prose != "A sample.\nSecond prose line." {
		t.Errorf("prose = %q", f.Prose)
	}
	if got := f.Value("func"); got != "echo" {
		t.Errorf("func = %q", got)
	}
	if got := strings.Join(f.IDs(), " "); got != "L-01 L-02 M-03" {
		t.Errorf("ids = %q", got)
	}
	if v, ok := f.Lookup("schema", "legacy.out[1]"); !ok || v != "legacy GetTaskResult" {
		t.Errorf("schema legacy.out[1] = %q, %v", v, ok)
	}
	msgs, err := f.Messages("legacy.in")
	if err != nil || len(msgs) != 2 {
		t.Fatalf("messages = %v, %v", msgs, err)
	}
	if got := f.OutputSections(); len(got) != 1 || got[0] != "legacy.out" {
		t.Errorf("outputs = %v", got)
	}
	// Format round-trips.
	g, err := Parse("again", f.Format())
	if err != nil {
		t.Fatal(err)
	}
	if g.Prose != f.Prose || len(g.Directives) != len(f.Directives) || len(g.Sections) != len(f.Sections) {
		t.Errorf("round trip changed the file:\n%s", f.Format())
	}
}

func TestParseRejectsBadHeaders(t *testing.T) {
	for _, in := range []string{
		"just words without colon\n-- a --\n",
		"a b c: too many\n-- a --\n",
		"Func: upper\n-- a --\n",
		"# ok\n-- a --\n{}\n-- a --\n{}\n",
	} {
		if _, err := Parse("bad", []byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded, want error", in)
		}
	}
}

func TestEqualSemantics(t *testing.T) {
	cases := []struct {
		want, got string
		eq        bool
	}{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{`{"a":1}`, `{"a":1.0}`, true},
		{`{"a":"<any>"}`, `{"a":{"x":1}}`, true},
		{`{"a":"<any>"}`, `{}`, false},
		{`{"a":null}`, `{}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":"x"}`, `{"a":"y"}`, false},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
	}
	for _, c := range cases {
		eq, diff, err := Equal([]byte(c.want), []byte(c.got))
		if err != nil {
			t.Fatalf("Equal(%s, %s): %v", c.want, c.got, err)
		}
		if eq != c.eq {
			t.Errorf("Equal(%s, %s) = %v, want %v\n%s", c.want, c.got, eq, c.eq, diff)
		}
		if !eq && diff == "" {
			t.Errorf("Equal(%s, %s): no diff for a mismatch", c.want, c.got)
		}
	}
	if _, _, err := Equal([]byte(`{`), []byte(`{}`)); err == nil {
		t.Error("Equal on invalid JSON: no error")
	}
}

func TestLineDiff(t *testing.T) {
	d := LineDiff("a\nb\nc", "a\nx\nc")
	want := "  a\n- b\n+ x\n  c\n"
	if d != want {
		t.Errorf("LineDiff = %q, want %q", d, want)
	}
}

func suite() *Suite {
	return &Suite{
		Handlers: map[string]Handler{
			"echo": echo,
			"fail": func(*File) (Output, error) { return nil, errors.New("boom") },
			"panic": func(*File) (Output, error) {
				var m map[string]int
				m["x"]++ // nil map write: a real panic
				return nil, nil
			},
			"extra": func(f *File) (Output, error) {
				o, _ := echo(f)
				o.Add("other.out", map[string]int{"n": 1})
				return o, nil
			},
		},
		Validate:   okValidator,
		Directives: []string{},
		Require:    []string{"ids"},
	}
}

func mustParse(t *testing.T, s string) *File {
	t.Helper()
	f, err := Parse("t.txtar", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCheckPasses(t *testing.T) {
	if probs := suite().Check(mustParse(t, sample)); len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
}

// TestBrokenExpectationIsReported is the harness-level proof that a wrong
// expected output fails: it mutates the expected section in memory.
func TestBrokenExpectationIsReported(t *testing.T) {
	f := mustParse(t, sample)
	broken := f.Clone()
	broken.SetSection("legacy.out", []byte("{\"a\":2}\n{\"b\":[1,2]}\n"))
	probs := suite().Check(broken)
	if len(probs) != 1 || !strings.Contains(probs[0].String(), "mismatch") ||
		!strings.Contains(probs[0].String(), "-   \"a\": 2") || !strings.Contains(probs[0].String(), "+   \"a\": 1") {
		t.Fatalf("want one mismatch with a diff, got %v", probs)
	}
	t.Logf("harness report for the broken expectation:\n%s", probs[0])
	// The original is untouched by Clone+SetSection.
	if probs := suite().Check(f); len(probs) != 0 {
		t.Fatalf("original now fails: %v", probs)
	}
}

func TestCheckReportsEveryKindOfProblem(t *testing.T) {
	cases := []struct {
		name, file, want string
	}{
		{"count", strings.Replace(sample, "{\"a\":1.0}\n{\"b\":[1,2]}\n", "{\"a\":1.0}\n", 1), "emitted 2 messages, want 1"},
		{"handler error", strings.Replace(sample, "func: echo", "func: fail", 1), "boom"},
		{"panic", strings.Replace(sample, "func: echo", "func: panic", 1), "panic"},
		{"unknown func", strings.Replace(sample, "func: echo", "func: nope", 1), "not a known handler"},
		{"unexpected output", strings.Replace(sample, "func: echo", "func: extra", 1), "emitted but not expected"},
		{"missing schema", strings.Replace(sample, "schema legacy.out: legacy Task\n", "", 1), "no schema directive"},
		{"schema none refused", strings.Replace(sample, "schema legacy.out: legacy Task", "schema legacy.out: none", 1), "not allowed"},
		{"schema rejects", strings.Replace(sample, "{\"a\":1}\n{\"b\"", "{\"a\":\"INVALID\"}\n{\"b\"", 1), "rejected by fake validator"},
		{"no prose", strings.Replace(sample, "# A sample.\n# Second prose line.\n", "", 1), "no prose"},
		{"no ids", strings.Replace(sample, "ids: L-01, L-02 M-03\n", "", 1), "missing required directive"},
		{"unknown directive", "# p\nfunc: echo\nids: L-01\nwat: 1\nschema legacy.in: legacy Task\nschema legacy.out: legacy Task\n-- legacy.in --\n{}\n-- legacy.out --\n{}\n", "unknown directive"},
		{"expected section missing", "# p\nfunc: extra\nids: L-01\nschema legacy.in: legacy Task\nschema legacy.out: legacy Task\n-- legacy.in --\n{}\n-- legacy.out --\n{}\n-- x.out --\n{}\n", "emitted nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probs := suite().Check(mustParse(t, c.file))
			var all []string
			for _, p := range probs {
				all = append(all, p.String())
			}
			if !strings.Contains(strings.Join(all, "\n"), c.want) {
				t.Errorf("problems %q do not mention %q", all, c.want)
			}
		})
	}
}

func TestAllowNoSchema(t *testing.T) {
	s := suite()
	s.AllowNoSchema = func(section string) bool { return section == "legacy.out" }
	f := mustParse(t, strings.Replace(sample, "schema legacy.out: legacy Task\nschema legacy.out[1]: legacy GetTaskResult", "schema legacy.out: none", 1))
	if probs := s.Check(f); len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
}

// TestRunWithOfficialSchemas runs testdata/*.txtar with the real validator.
func TestRunWithOfficialSchemas(t *testing.T) {
	s := &Suite{Handlers: map[string]Handler{"echo": echo}, Validate: SchemaValidator(schemacheck.Load(t))}
	if n := s.Run(t, "testdata/*.txtar"); n < 1 {
		t.Fatalf("ran %d files", n)
	}
	// And the real validator really rejects: a Task without ttl.
	err := s.Validate("legacy", "Task", json.RawMessage(`{"taskId":"t","status":"working","createdAt":"x","lastUpdatedAt":"x"}`))
	if err == nil {
		t.Fatal("legacy Task without ttl validated")
	}
	if err := s.Validate("nope", "Task", nil); err == nil {
		t.Fatal("unknown schema name accepted")
	}
}
