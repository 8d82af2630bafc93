package router_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/internal/testkit/transcript"
	"github.com/tasksbridge/tasksbridge/router"
)

// TestTranscripts runs testdata/*.txtar: one bridge listener in front of a
// fresh upstream of the era the "upstream" directive names (modern: the
// embedded demo server; legacy: the in-repo go-sdk legacy fixture), and two
// raw clients on it, a legacy and a modern one, whose requests interleave.
//
// Each NN-label.in section is one request:
//
//	{"client": "legacy"|"modern", "method": ..., "params": ...,
//	 "status": 200, "meta": false, "headers": {...}, "body": "..."}
//
// "status" (optional) is the HTTP status the answer must have; "meta":
// false sends a modern request without the automatic per-request _meta;
// "headers" set or override HTTP headers; "body" is sent verbatim instead of
// a request built from method and params (the client's headers still name
// method; an answer without a body is recorded as {}). The legacy client's initialize
// also opens its session (Mcp-Session-Id, notifications/initialized). The
// answer's result, or its JSON-RPC error object, goes to NN-label.out. $task
// is the id of the latest task a tools/call returned (legacy nested or modern
// flat), substituted in inputs and expected outputs.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	v := schemacheck.Load(t)
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			f, err := transcript.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s := &transcript.Suite{
				Handlers:   map[string]transcript.Handler{"route": func(f *transcript.File) (transcript.Output, error) { return runRoute(t, f) }},
				Validate:   transcript.SchemaValidator(v),
				Directives: []string{"upstream", "upstream-era"},
				Require:    []string{"ids", "upstream"},
			}
			for _, p := range s.Check(f) {
				t.Error(p.String())
			}
		})
	}
}

type routeStep struct {
	Client  string            `json:"client"`
	Method  string            `json:"method"`
	Params  json.RawMessage   `json:"params"`
	Status  int               `json:"status"`
	Meta    *bool             `json:"meta"`
	Headers map[string]string `json:"headers"`
	Body    *string           `json:"body"`
}

func runRoute(t *testing.T, f *transcript.File) (transcript.Output, error) {
	ctx := ctxT(t)
	var up string
	switch f.Value("upstream") {
	case "modern":
		up = startModern(t)
	case "legacy":
		up, _ = startLegacy(t)
	default:
		return nil, fmt.Errorf("upstream %q: want modern or legacy", f.Value("upstream"))
	}
	br := startBridge(t, router.Config{Upstream: up, UpstreamEra: f.Value("upstream-era")})
	clients := map[string]*rawClient{
		"legacy": newLegacyClient(t, br.url, "transcript-legacy"),
		"modern": newModernClient(t, br.url, "transcript-modern"),
	}
	vars := map[string]string{}
	subst := func(s string) string {
		keys := make([]string, 0, len(vars))
		for k := range vars {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
		for _, k := range keys {
			s = strings.ReplaceAll(s, k, vars[k])
		}
		return s
	}
	out := transcript.Output{}
	for _, sec := range f.Sections {
		label, ok := strings.CutSuffix(sec.Name, ".in")
		if !ok {
			continue
		}
		var st routeStep
		if err := json.Unmarshal([]byte(subst(string(sec.Data))), &st); err != nil {
			return nil, fmt.Errorf("%s: %w", sec.Name, err)
		}
		c := clients[st.Client]
		if c == nil {
			return nil, fmt.Errorf("%s: client %q: want legacy or modern", sec.Name, st.Client)
		}
		var params any
		if len(st.Params) > 0 {
			var p map[string]any
			if err := json.Unmarshal(st.Params, &p); err != nil {
				return nil, fmt.Errorf("%s params: %w", sec.Name, err)
			}
			params = p
		}
		c.noMeta = st.Meta != nil && !*st.Meta
		c.headers = st.Headers
		var r reply
		if st.Body != nil {
			a := postRaw(t, ctx, c, st.Method, []byte(*st.Body))
			r = reply{Status: a.status, Err: a.err, Result: json.RawMessage(`{}`)}
		} else if st.Method == "initialize" && !c.modern {
			r = c.initialize(ctx)
		} else {
			r = c.call(ctx, st.Method, params)
		}
		c.noMeta, c.headers = false, nil
		if st.Status != 0 && r.Status != st.Status {
			return nil, fmt.Errorf("%s: HTTP %d, want %d (%v)", sec.Name, r.Status, st.Status, r)
		}
		name := label + ".out"
		var msg []byte
		if r.Err != nil {
			msg, _ = json.Marshal(r.Err)
		} else {
			if id := field(t, r.Result, "task.taskId"); id != "" {
				vars["$task"] = id
			} else if field(t, r.Result, "resultType") == "task" {
				vars["$task"] = field(t, r.Result, "taskId")
			}
			msg = r.Result
		}
		if id := vars["$task"]; id != "" {
			// Expected outputs name the id as $task.
			msg = []byte(strings.ReplaceAll(string(msg), id, "$task"))
		}
		out[name] = append(out[name], json.RawMessage(msg))
	}
	return out, nil
}
