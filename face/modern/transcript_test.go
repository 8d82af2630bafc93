package modernface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/internal/testkit/transcript"
	"github.com/tasksbridge/tasksbridge/modern"
)

// Face transcripts (testdata/*.txtar): a modern client's HTTP conversation
// with the face in front of the in-repo legacy fixture. Each "NN.in" section
// is one step, a JSON object:
//
//	method, params     the request (params get the per-request _meta)
//	caps               client capabilities: any of "tasks", "elicitation",
//	                   "sampling" (default all three; [] declares none)
//	meta               false: send params without any _meta
//	version            the _meta protocolVersion (default 2026-07-28)
//	headers            header overrides ("" deletes one)
//	auth               the Authorization header
//	body               send this exact text instead of method/params
//	until              repeat until result.status is one of these
//	untilInputs        repeat until result has at least this many inputRequests
//	capture            {"name": "path"}: remember a value of the reply
//	                   (paths: "taskId", "requestState", "inputRequests.*0"
//	                   for the first key in sorted order, "inputRequests~x"
//	                   for the first key whose request mentions x)
//
// "$name" in a later step (as a string or object key) is replaced by the
// captured value; in the reply, captured values are shown as "$name" again.
// The "NN.out" section is what the step emitted: the result object of a
// success, or the whole error response; "status NN.out: 400" checks the
// HTTP status (200 otherwise). Every emitted message is validated against
// the schema its "schema" directive names. "fixture: task-first" runs the
// fixture with Options.TaskFirstCompose.

type step struct {
	Method      string            `json:"method"`
	Params      map[string]any    `json:"params"`
	Caps        *[]string         `json:"caps"`
	Meta        *bool             `json:"meta"`
	Version     string            `json:"version"`
	Headers     map[string]string `json:"headers"`
	Auth        string            `json:"auth"`
	Body        string            `json:"body"`
	Until       []string          `json:"until"`
	UntilInputs int               `json:"untilInputs"`
	Capture     map[string]string `json:"capture"`
}

func TestTranscripts(t *testing.T) {
	if os.Getenv("FACE_TRANSCRIPT_RECORD") != "" {
		recordTranscripts(t)
	}
	v := schemacheck.Load(t)
	suite := &transcript.Suite{
		Handlers: map[string]transcript.Handler{"face": func(f *transcript.File) (transcript.Output, error) {
			return runFaceTranscript(t, f)
		}},
		Validate:   transcript.SchemaValidator(v),
		Directives: []string{"status", "fixture"},
		Require:    []string{"ids"},
	}
	if n := suite.Run(t, "testdata/*.txtar"); n < 15 {
		t.Fatalf("ran %d transcripts, want at least 15", n)
	}
}

func runFaceTranscript(t *testing.T, f *transcript.File) (transcript.Output, error) {
	fxMode, _ := f.Lookup("fixture", "")
	e := newEnv(t, envOpts{face: func(o *modernface.Options) {
		o.ServerInfo = &modern.Implementation{Name: "tasksbridge", Version: "test"}
		o.TaskTTL = 10 * time.Minute
	}, fixture: func(o *legacyfixture.Options) { o.TaskFirstCompose = fxMode == "task-first" }})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	vars := map[string]string{}
	out := transcript.Output{}
	var names []string
	for _, s := range f.Sections {
		if strings.HasSuffix(s.Name, ".in") {
			names = append(names, strings.TrimSuffix(s.Name, ".in"))
		}
	}
	for _, n := range names {
		raw, err := f.Message(n + ".in")
		if err != nil {
			return nil, err
		}
		var st step
		if err := json.Unmarshal(substitute(raw, vars), &st); err != nil {
			return nil, fmt.Errorf("%s.in: %w", n, err)
		}
		r, err := e.runStep(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("%s.in: %w", n, err)
		}
		want := 200
		if v, ok := f.Lookup("status", n+".out"); ok {
			if want, err = strconv.Atoi(v); err != nil {
				return nil, fmt.Errorf("status %s.out: %w", n, err)
			}
		}
		if r.status != want {
			return nil, fmt.Errorf("%s: HTTP %d, want %d; body %s", n, r.status, want, r.body)
		}
		emitted := r.body
		if r.result != nil {
			var m struct {
				Result json.RawMessage `json:"result"`
			}
			_ = json.Unmarshal(r.body, &m)
			emitted = m.Result
		}
		for name, path := range st.Capture {
			val, err := capture(emitted, path)
			if err != nil {
				return nil, fmt.Errorf("%s capture %s: %w (reply %s)", n, name, err, emitted)
			}
			vars[name] = val
		}
		out[n+".out"] = append(out[n+".out"], unsubstitute(emitted, vars))
	}
	return out, nil
}

// runStep sends one step, repeating it while its until condition does not
// hold (a client polling at the fixture's pace).
func (e *env) runStep(ctx context.Context, st step) (reply, error) {
	for {
		r := e.sendStep(ctx, st)
		if len(st.Until) == 0 && st.UntilInputs == 0 {
			return r, nil
		}
		if r.result == nil {
			return r, fmt.Errorf("no result while polling: %s", r.body)
		}
		status, _ := r.result["status"].(string)
		inputs, _ := r.result["inputRequests"].(map[string]any)
		done := (len(st.Until) == 0 || contains(st.Until, status)) && len(inputs) >= st.UntilInputs
		if done || terminal(r.result) && st.UntilInputs > 0 {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("condition never held; last reply %s", r.body)
		case <-time.After(20 * time.Millisecond): // the client's poll interval
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (e *env) sendStep(ctx context.Context, st step) reply {
	if st.Body != "" {
		return e.request(ctx, []byte(st.Body), headers(st))
	}
	params := st.Params
	if params == nil {
		params = map[string]any{}
	}
	if st.Meta == nil || *st.Meta {
		caps := clientCaps{tasks: true, elicitation: true, sampling: true}
		if st.Caps != nil {
			caps = clientCaps{}
			for _, c := range *st.Caps {
				switch c {
				case "tasks":
					caps.tasks = true
				case "elicitation":
					caps.elicitation = true
				case "sampling":
					caps.sampling = true
				}
			}
		}
		params = withMeta(params, caps)
		if st.Version != "" {
			params["_meta"].(map[string]any)[modern.MetaKeyProtocolVersion] = st.Version
		}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": e.ids.Add(1), "method": st.Method, "params": params})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.request(ctx, body, headers(st))
}

func headers(st step) map[string]string {
	h := map[string]string{}
	for k, v := range st.Headers {
		h[k] = v
	}
	if st.Auth != "" {
		h["Authorization"] = st.Auth
	}
	return h
}

var varRef = regexp.MustCompile(`"\$([A-Za-z0-9_]+)"`)

// substitute replaces "$name" JSON strings by the captured values.
func substitute(raw []byte, vars map[string]string) []byte {
	return varRef.ReplaceAllFunc(raw, func(m []byte) []byte {
		name := string(m[2 : len(m)-1])
		if v, ok := vars[name]; ok {
			b, _ := json.Marshal(v)
			return b
		}
		return m
	})
}

// unsubstitute shows captured values as "$name" in a reply (also inside
// longer strings such as error messages).
func unsubstitute(raw []byte, vars map[string]string) json.RawMessage {
	out := bytes.Clone(raw)
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		out = bytes.ReplaceAll(out, []byte(vars[name]), []byte("$"+name))
	}
	return out
}

// recordTranscripts rewrites the .out sections of every transcript from a
// run (FACE_TRANSCRIPT_RECORD=1), timestamps as "<any>". Review the diff
// before committing: the recording is only a starting point.
func recordTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	for _, path := range files {
		f, err := transcript.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out, err := runFaceTranscript(t, f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for name, msgs := range out {
			var buf bytes.Buffer
			for _, m := range msgs {
				var v any
				if err := json.Unmarshal(m, &v); err != nil {
					t.Fatal(err)
				}
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				if err := enc.Encode(anyTimes(v)); err != nil {
					t.Fatal(err)
				}
			}
			f.SetSection(name, buf.Bytes())
		}
		// Each step's output right after its input.
		var ordered []transcript.Section
		for _, s := range f.Sections {
			if strings.HasSuffix(s.Name, ".in") {
				ordered = append(ordered, s)
				n := strings.TrimSuffix(s.Name, ".in") + ".out"
				if d, ok := f.Section(n); ok {
					ordered = append(ordered, transcript.Section{Name: n, Data: d})
				}
			}
		}
		f.Sections = ordered
		if err := os.WriteFile(path, f.Format(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func anyTimes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if k == "createdAt" || k == "lastUpdatedAt" {
				x[k] = transcript.Wildcard
			} else {
				x[k] = anyTimes(val)
			}
		}
	case []any:
		for i := range x {
			x[i] = anyTimes(x[i])
		}
	}
	return v
}

// capture reads path from a reply object.
func capture(raw []byte, path string) (string, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", err
	}
	if field, sub, ok := strings.Cut(path, "~"); ok {
		m, _ := obj[field].(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b, _ := json.Marshal(m[k])
			if strings.Contains(string(b), sub) {
				return k, nil
			}
		}
		return "", fmt.Errorf("no %s entry mentions %q", field, sub)
	}
	if field, idx, ok := strings.Cut(path, ".*"); ok {
		m, _ := obj[field].(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		i, _ := strconv.Atoi(idx)
		if i >= len(keys) {
			return "", fmt.Errorf("%s has %d keys", field, len(keys))
		}
		return keys[i], nil
	}
	s, ok := obj[path].(string)
	if !ok {
		return "", fmt.Errorf("no string at %q", path)
	}
	return s, nil
}
