package legacyface_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/internal/testkit/transcript"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// TestTranscripts runs the end-to-end transcripts in testdata/*.txtar: a
// raw 2025-11-25 client talks to a fresh bridge in front of a fresh embedded
// modern upstream, step by step.
//
// Sections, in file order (NN-label.kind):
//   - NN-label.in: one request {"method", "params"}; the bridge's result (or
//     its JSON-RPC error object, as {"error": ...}) goes to NN-label.out,
//     the server→client requests it sent on that stream to
//     NN-label.requests.out and its notifications to NN-label.notes.out;
//   - NN-label.answers: the client's answers to the next step's
//     server→client requests, in order ({"result": ...} or {"error": ...});
//   - NN-label.act: commands: "complete $task" (end a delayed upstream task
//     now), "advance 1s" (the upstream's fake clock, and the bridge
//     watchers' clock under "bridge: manual-clock").
//
// $task is the id of the latest CreateTaskResult, $task1, $task2... of each
// in order; they are substituted in inputs and expected outputs. Directives:
// "upstream: ignore-cancel|no-push|ignore-caps", "bridge: manual-clock" (the
// watchers' clock moves only with "advance", so whether a read polls the
// upstream does not depend on how fast the machine is), "caps: {client capabilities}",
// "authz: <Authorization header>".
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
				Handlers:   map[string]transcript.Handler{"e2e": func(f *transcript.File) (transcript.Output, error) { return runE2E(t, f) }},
				Validate:   transcript.SchemaValidator(v),
				Directives: []string{"upstream", "bridge", "caps", "authz"},
				Require:    []string{"ids"},
			}
			for _, p := range s.Check(f) {
				t.Error(p.String())
			}
		})
	}
}

func runE2E(t *testing.T, f *transcript.File) (transcript.Output, error) {
	ctx := ctxT(t, 30*time.Second)
	var uo demo.Options
	for _, v := range f.Values("upstream") {
		for _, w := range strings.Fields(v) {
			switch w {
			case "ignore-cancel":
				uo.IgnoreCancel = true
			case "no-push":
				uo.DisablePush = true
			case "ignore-caps":
				uo.IgnoreClientCapabilities = true
			default:
				return nil, fmt.Errorf("unknown upstream option %q", w)
			}
		}
	}
	up := startUpstream(t, uo)
	var cfg legacyface.Config
	var wclk *manualClock
	for _, v := range f.Values("bridge") {
		switch v {
		case "manual-clock":
			wclk = newManualClock()
			cfg.Watch.Clock = wclk
		default:
			return nil, fmt.Errorf("unknown bridge option %q", v)
		}
	}
	br := startBridge(t, up, cfg)
	br.watchClock = wclk
	c := newRawClient(t, br.url)
	c.authz = f.Value("authz")
	var caps map[string]any
	if s := f.Value("caps"); s != "" {
		if err := json.Unmarshal([]byte(s), &caps); err != nil {
			return nil, fmt.Errorf("caps: %w", err)
		}
	}
	c.initialize(ctx, caps)

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
	var answers []json.RawMessage
	c.setHandler(func(method string, params json.RawMessage) (any, *rpc.Error) {
		if len(answers) == 0 {
			return nil, rpc.Errorf(rpc.CodeInternalError, "transcript has no answer for %s", method)
		}
		a := answers[0]
		answers = answers[1:]
		var e struct {
			Result json.RawMessage `json:"result"`
			Error  *rpc.Error      `json:"error"`
		}
		if err := json.Unmarshal(a, &e); err != nil {
			return nil, rpc.Errorf(rpc.CodeInternalError, "bad answer %s", a)
		}
		if e.Error != nil {
			return nil, e.Error
		}
		return e.Result, nil
	})
	tasks := 0
	for _, sec := range f.Sections {
		base, kind, ok := cutLast(sec.Name, ".")
		if !ok || kind == "out" || strings.HasSuffix(base, ".requests") || strings.HasSuffix(base, ".notes") {
			continue
		}
		switch kind {
		case "answers":
			msgs, err := transcript.DecodeStream([]byte(subst(string(sec.Data))))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sec.Name, err)
			}
			answers = append(answers, msgs...)
		case "act":
			for _, line := range strings.Split(subst(string(sec.Data)), "\n") {
				if err := runAct(up, br, strings.Fields(line)); err != nil {
					return nil, fmt.Errorf("%s: %w", sec.Name, err)
				}
			}
		case "in":
			var req struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal([]byte(subst(string(sec.Data))), &req); err != nil {
				return nil, fmt.Errorf("%s: %w", sec.Name, err)
			}
			var params any
			if req.Params != nil {
				params = req.Params
			}
			r, err := c.try(ctx, req.Method, params)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sec.Name, err)
			}
			switch {
			case r.Err != nil:
				out.Add(base+".out", r.Err)
			case r.Result != nil:
				out[base+".out"] = append(out[base+".out"], r.Result)
				var ct struct {
					Task *struct {
						TaskID string `json:"taskId"`
					} `json:"task"`
				}
				if json.Unmarshal(r.Result, &ct) == nil && ct.Task != nil && ct.Task.TaskID != "" {
					tasks++
					vars["$task"] = ct.Task.TaskID
					vars["$task"+strconv.Itoa(tasks)] = ct.Task.TaskID
				}
			default:
				out.Add(base+".out", map[string]any{"http": r.Status, "body": strings.TrimSpace(string(r.Body))})
			}
			for _, m := range r.Requests {
				out[base+".requests.out"] = append(out[base+".requests.out"], m)
			}
			for _, m := range r.Notes {
				out[base+".notes.out"] = append(out[base+".notes.out"], m)
			}
		default:
			return nil, fmt.Errorf("section %s: unknown kind %q", sec.Name, kind)
		}
	}
	if len(answers) > 0 {
		return nil, fmt.Errorf("%d answers were never asked for", len(answers))
	}
	// Expected outputs may name the ids minted during the run.
	for _, name := range f.OutputSections() {
		data, _ := f.Section(name)
		f.SetSection(name, []byte(subst(string(data))))
	}
	c.checkReceived(t)
	if testing.Verbose() {
		for _, name := range f.OutputSections() {
			for _, m := range out[name] {
				t.Logf("%s: %s", name, m)
			}
		}
	}
	return out, nil
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func runAct(up *upEnv, br *bridgeEnv, w []string) error {
	if len(w) == 0 {
		return nil
	}
	switch w[0] {
	case "complete":
		if len(w) != 2 {
			return fmt.Errorf("complete needs a task id")
		}
		rec, err := lookupTask(br, w[1])
		if err != nil {
			return err
		}
		if !up.srv.CompleteNow(rec) {
			return fmt.Errorf("upstream task of %s had no pending end", w[1])
		}
	case "advance":
		if len(w) != 2 {
			return fmt.Errorf("advance needs a duration")
		}
		d, err := time.ParseDuration(w[1])
		if err != nil {
			return err
		}
		up.clock.Advance(d)
		if br.watchClock != nil {
			br.watchClock.Advance(d)
		}
	default:
		return fmt.Errorf("unknown act %q", w[0])
	}
	return nil
}
