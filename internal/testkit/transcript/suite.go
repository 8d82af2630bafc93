package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Output is what a handler emitted: section name (ending in ".out") → the
// messages of that section, in order.
type Output map[string][]json.RawMessage

// Add appends the JSON encoding of v to section name. A value that cannot be
// encoded is recorded as a JSON string describing the failure, so the
// comparison shows it instead of the harness panicking.
func (o Output) Add(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal("transcript: cannot encode output: " + err.Error())
	}
	o[name] = append(o[name], b)
}

// Handler runs the code under test on the inputs of f and returns what it
// emitted. A returned error is reported as a failure of the transcript;
// handlers that test error paths emit the error as an output section instead.
type Handler func(f *File) (Output, error)

// Validator checks msg against definition def of the schema named schema
// (as written in the file, e.g. "legacy", "modern", "ext").
type Validator func(schema, def string, msg []byte) error

// NoSchema is the schema directive value for sections that are not protocol
// messages (internal decisions): "schema decision.out: none".
const NoSchema = "none"

// Wildcard, as an expected JSON string, matches any value at that position
// (for ids and timestamps the code mints at random).
const Wildcard = "<any>"

// Suite runs transcripts against a set of handlers.
type Suite struct {
	// Handlers maps the "func" directive to the code under test.
	Handlers map[string]Handler
	// Validate validates every emitted message (and every input message whose
	// section has a schema directive). Required.
	Validate Validator
	// AllowNoSchema reports whether an output section may be declared
	// "schema <section>: none". Nil means never: every emitted message must be
	// validated against a schema definition.
	AllowNoSchema func(section string) bool
	// Directives, when non-nil, is the closed set of directive keys; others
	// are reported (catches typos). "func", "ids" and "schema" are always known.
	Directives []string
	// Require lists directive keys every file must carry (e.g. "ids").
	Require []string
}

// Problem is one failed expectation of a transcript.
type Problem struct {
	File    string
	Section string
	Msg     string
}

func (p Problem) String() string {
	if p.Section == "" {
		return p.File + ": " + p.Msg
	}
	return p.File + ": " + p.Section + ": " + p.Msg
}

// Check runs one transcript and returns every failed expectation; nil means it
// passed.
func (s *Suite) Check(f *File) []Problem {
	var probs []Problem
	add := func(section, format string, a ...any) {
		probs = append(probs, Problem{File: f.Name, Section: section, Msg: fmt.Sprintf(format, a...)})
	}
	if strings.TrimSpace(f.Prose) == "" {
		add("", "header has no prose ('# ...') saying what the scenario proves")
	}
	known := map[string]bool{"func": true, "ids": true, "schema": true}
	for _, k := range s.Directives {
		known[k] = true
	}
	for _, d := range f.Directives {
		if s.Directives != nil && !known[d.Key] {
			add("", "line %d: unknown directive %q", d.Line, d.Key)
		}
		if d.Key == "schema" {
			if d.Selector == "" {
				add("", "line %d: schema directive needs a section: \"schema <section>: <schema> <Def>\"", d.Line)
			} else if name, _, _ := splitSelector(d.Selector); !f.Has(name) {
				add("", "line %d: schema directive names missing section %q", d.Line, name)
			}
		}
	}
	for _, k := range s.Require {
		if len(f.Values(k)) == 0 {
			add("", "missing required directive %q", k)
		}
	}
	fn := f.Value("func")
	h, ok := s.Handlers[fn]
	if !ok {
		add("", "func %q is not a known handler", fn)
		return probs
	}
	outs := f.OutputSections()
	if len(outs) == 0 {
		add("", "no expected-output section (name ending in %q)", OutSuffix)
	}

	// Inputs that declare a schema are validated too, so a scenario cannot
	// feed the code a message no real peer could send by accident.
	for _, sec := range f.Sections {
		if strings.HasSuffix(sec.Name, OutSuffix) {
			continue
		}
		if _, has := s.schemaFor(f, sec.Name, -1); !has {
			continue
		}
		msgs, err := DecodeStream(sec.Data)
		if err != nil {
			add(sec.Name, "input is not a JSON stream: %v", err)
			continue
		}
		for i, m := range msgs {
			probs = append(probs, s.validate(f, sec.Name, i, m)...)
		}
	}

	got, err := s.call(h, f)
	if err != nil {
		add("", "handler %s: %v", fn, err)
		return probs
	}
	for _, name := range outs {
		want, err := f.Messages(name)
		if err != nil {
			add(name, "expected output is not a JSON stream: %v", err)
			continue
		}
		have, emitted := got[name]
		if !emitted {
			add(name, "expected output, but %s emitted nothing for this section", fn)
			continue
		}
		probs = append(probs, compareSection(f.Name, name, want, have)...)
	}
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !f.Has(name) {
			add(name, "emitted but not expected:\n%s", indentAll(got[name]))
		}
		// Every emitted message is validated, expected or not.
		for i, m := range got[name] {
			probs = append(probs, s.validate(f, name, i, m)...)
		}
	}
	return probs
}

// call runs h, turning a panic into an error: a panicking translator is a
// finding, not a crash of the whole suite.
func (s *Suite) call(h Handler, f *File) (out Output, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return h(f)
}

func (s *Suite) validate(f *File, section string, i int, msg json.RawMessage) []Problem {
	ref, ok := s.schemaFor(f, section, i)
	where := fmt.Sprintf("%s[%d]", section, i)
	if !ok {
		return []Problem{{File: f.Name, Section: where, Msg: fmt.Sprintf(
			"no schema directive (\"schema %s: <legacy|modern|ext> <Def>\"); every emitted message is validated", section)}}
	}
	fields := strings.Fields(ref)
	if len(fields) == 1 && fields[0] == NoSchema {
		if s.AllowNoSchema != nil && s.AllowNoSchema(section) {
			return nil
		}
		return []Problem{{File: f.Name, Section: where, Msg: "schema \"none\" is not allowed for a protocol message section"}}
	}
	if len(fields) != 2 {
		return []Problem{{File: f.Name, Section: where, Msg: fmt.Sprintf("schema directive %q: want \"<schema> <Def>\"", ref)}}
	}
	if s.Validate == nil {
		return []Problem{{File: f.Name, Section: where, Msg: "suite has no Validate function"}}
	}
	if err := s.Validate(fields[0], fields[1], msg); err != nil {
		return []Problem{{File: f.Name, Section: where, Msg: fmt.Sprintf("schema %s %s: %v\nmessage: %s", fields[0], fields[1], err, msg)}}
	}
	return nil
}

// schemaFor finds the schema directive for message i of section: the
// "section[i]" selector wins over the plain "section" one. i < 0 asks only
// whether any applies.
func (s *Suite) schemaFor(f *File, section string, i int) (string, bool) {
	if i >= 0 {
		if v, ok := f.Lookup("schema", section+"["+strconv.Itoa(i)+"]"); ok {
			return v, true
		}
	}
	if v, ok := f.Lookup("schema", section); ok {
		return v, true
	}
	if i < 0 {
		for _, d := range f.Directives {
			if name, _, ok := splitSelector(d.Selector); d.Key == "schema" && ok && name == section {
				return d.Value, true
			}
		}
	}
	return "", false
}

// splitSelector splits "sec[3]" into ("sec", 3, true); "sec" gives ("sec", -1, true).
func splitSelector(sel string) (string, int, bool) {
	name, rest, ok := strings.Cut(sel, "[")
	if !ok {
		return sel, -1, true
	}
	n, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
	if err != nil || !strings.HasSuffix(rest, "]") {
		return name, -1, false
	}
	return name, n, true
}

func compareSection(file, name string, want, have []json.RawMessage) []Problem {
	var probs []Problem
	if len(want) != len(have) {
		probs = append(probs, Problem{File: file, Section: name, Msg: fmt.Sprintf(
			"emitted %d messages, want %d\n--- want\n%s\n--- got\n%s", len(have), len(want), indentAll(want), indentAll(have))})
	}
	for i := 0; i < len(want) && i < len(have); i++ {
		ok, diff, err := Equal(want[i], have[i])
		if err != nil {
			probs = append(probs, Problem{File: file, Section: fmt.Sprintf("%s[%d]", name, i), Msg: err.Error()})
			continue
		}
		if !ok {
			probs = append(probs, Problem{File: file, Section: fmt.Sprintf("%s[%d]", name, i), Msg: "mismatch (- want, + got):\n" + diff})
		}
	}
	return probs
}

// Equal reports whether got is JSON-equal to want (object key order and
// number spelling do not matter; a want string "<any>" matches any value).
// When they differ, diff is a line diff of their indented forms.
func Equal(want, got []byte) (ok bool, diff string, err error) {
	w, err := decodeAny(want)
	if err != nil {
		return false, "", fmt.Errorf("expected value: %w", err)
	}
	g, err := decodeAny(got)
	if err != nil {
		return false, "", fmt.Errorf("emitted value: %w", err)
	}
	if equalValue(w, g) {
		return true, "", nil
	}
	return false, LineDiff(indent(w), indent(g)), nil
}

func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

func equalValue(want, got any) bool {
	if s, ok := want.(string); ok && s == Wildcard {
		return true
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !equalValue(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !equalValue(w[i], g[i]) {
				return false
			}
		}
		return true
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return false
		}
		if w == g {
			return true
		}
		wf, err1 := w.Float64()
		gf, err2 := g.Float64()
		return err1 == nil && err2 == nil && wf == gf
	default: // string, bool, nil
		return want == got
	}
}

func indent(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

func indentAll(msgs []json.RawMessage) string {
	var parts []string
	for _, m := range msgs {
		v, err := decodeAny(m)
		if err != nil {
			parts = append(parts, string(m))
			continue
		}
		parts = append(parts, indent(v))
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, "\n")
}

// LineDiff returns a unified-style line diff of a and b ("-" lines only in a,
// "+" lines only in b, "  " common), computed by longest common subsequence.
func LineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	// lcs[i][j] = LCS length of x[i:], y[j:]
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			out.WriteString("  " + x[i] + "\n")
			i++
			j++
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + x[i] + "\n")
			i++
		default:
			out.WriteString("+ " + y[j] + "\n")
			j++
		}
	}
	return out.String()
}

// Run runs every transcript matching pattern (a filepath.Glob pattern) as a
// subtest of t and returns how many files it ran. A pattern matching nothing
// fails t.
func (s *Suite) Run(t *testing.T, pattern string) int {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatalf("transcript: glob %q: %v", pattern, err)
	}
	if len(files) == 0 {
		t.Fatalf("transcript: no files match %q", pattern)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), func(t *testing.T) {
			f, err := ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range s.Check(f) {
				t.Error(p.String())
			}
		})
	}
	return len(files)
}
