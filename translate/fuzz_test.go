package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/transcript"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Fuzz targets for every translate entry point. Seeds are the input sections
// of the transcripts that drive the same function, plus a few malformed
// shapes. Properties: no panic; every error is an *rpc.Error with a code from
// the JSON-RPC/MCP vocabulary (never the draft -32003); every success
// encodes (the strict encoders of legacy/modern accept it).

var validCodes = map[int64]bool{
	rpc.CodeParseError: true, rpc.CodeInvalidRequest: true, rpc.CodeMethodNotFound: true,
	rpc.CodeInvalidParams: true, rpc.CodeInternalError: true,
	rpc.CodeMissingRequiredClientCapability: true, rpc.CodeHeaderMismatch: true, rpc.CodeUnsupportedProtocolVersion: true,
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *rpc.Error
	if !errors.As(err, &e) || e == nil {
		t.Fatalf("error is not an *rpc.Error: %T %v", err, err)
	}
	if !validCodes[e.Code] {
		t.Fatalf("error code %d is not one a face may answer with: %v", e.Code, e)
	}
	if e.Message == "" {
		t.Fatalf("error %d has no message", e.Code)
	}
}

func checkEncodes(t *testing.T, v any) {
	t.Helper()
	if _, err := json.Marshal(v); err != nil {
		t.Fatalf("successful translation does not encode: %v (%#v)", err, v)
	}
}

var malformed = [][]byte{nil, []byte(""), []byte("null"), []byte("{"), []byte("[]"), []byte(`"x"`), []byte(`{"task":7}`),
	[]byte(`{"taskId":1}`), []byte(`{"_meta":[]}`), []byte(`{"status":"working","taskId":"t","createdAt":"x","lastUpdatedAt":"y","ttlMs":-5,"ttl":-5}`)}

// seeds returns, for every transcript driving fn, the given sections (nil
// when a file lacks one).
func seeds(f *testing.F, fn string, sections ...string) [][][]byte {
	f.Helper()
	paths, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		f.Fatal(err)
	}
	var out [][][]byte
	for _, p := range paths {
		tf, err := transcript.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if tf.Value("func") != fn {
			continue
		}
		row := make([][]byte, len(sections))
		for i, s := range sections {
			row[i], _ = tf.Section(s)
		}
		out = append(out, row)
	}
	if len(out) == 0 {
		f.Fatalf("no transcript drives %s", fn)
	}
	return out
}

// seed1 adds one-input seeds: the transcripts' section plus the malformed set.
func seed1(f *testing.F, fn, section string) {
	for _, s := range seeds(f, fn, section) {
		f.Add(s[0])
	}
	for _, m := range malformed {
		f.Add(m)
	}
}

// params extracts params from a whole request, for seeding functions that take params.
func params(b []byte) []byte {
	var r struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(b, &r) != nil {
		return b
	}
	return r.Params
}

func FuzzCreateTaskResultToLegacy(f *testing.F) {
	seed1(f, "CreateTaskResultToLegacy", "modern.in")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := CreateTaskResultToLegacy(data, CreateOptions{ImmediateResponse: "x"})
		checkErr(t, err)
		if err == nil {
			checkEncodes(t, r)
			if r.Task.Status != legacy.StatusWorking {
				t.Fatalf("legacy CreateTaskResult status %q, want working (L-17)", r.Task.Status)
			}
		}
	})
}

func FuzzCreateTaskResultToModern(f *testing.F) {
	seed1(f, "CreateTaskResultToModern", "legacy.in")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := CreateTaskResultToModern(data)
		checkErr(t, err)
		if err == nil {
			checkEncodes(t, r)
		}
	})
}

func FuzzGetTaskResultToLegacy(f *testing.F) {
	seed1(f, "GetTaskResultToLegacy", "modern.in")
	for _, s := range seeds(f, "TasksResultOutcome", "modern.in") {
		f.Add(s[0])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := GetTaskResultToLegacy(data)
		checkErr(t, err)
		if err == nil {
			checkEncodes(t, r)
		}
	})
}

func FuzzStatusNotificationToLegacy(f *testing.F) {
	for _, s := range seeds(f, "StatusNotificationToLegacy", "modern.in") {
		f.Add(params(s[0]))
	}
	for _, m := range malformed {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := StatusNotificationToLegacy(data)
		checkErr(t, err)
		if err == nil {
			checkEncodes(t, r)
		}
	})
}

func FuzzTasksResultOutcome(f *testing.F) {
	for _, s := range seeds(f, "TasksResultOutcome", "modern.in") {
		f.Add(s[0], false)
		f.Add(s[0], true)
	}
	f.Fuzz(func(t *testing.T, data []byte, pinned bool) {
		g, err := modern.DecodeGetTaskResult(data)
		if err != nil {
			checkErr(t, err)
			return
		}
		o, err := TasksResultOutcome(g.DetailedTask, pinned, map[string]bool{"name": true})
		checkErr(t, err)
		if err != nil {
			return
		}
		switch o.Kind {
		case ResultReady:
			checkEncodes(t, o.Result)
			if id, ok := o.Result.RelatedTaskID(); !ok || id != g.TaskID {
				t.Fatalf("tasks/result without related-task _meta for %q (L-34)", g.TaskID)
			}
		case ResultError:
			if o.Error == nil {
				t.Fatal("ResultError without error")
			}
		case ResultWait:
		default:
			t.Fatalf("invalid kind %v", o.Kind)
		}
		if pinned && o.Kind != ResultError {
			t.Fatalf("pinned task gave %v, want the cancellation error (L-59)", o.Kind)
		}
	})
}

func FuzzPayloadToLegacy(f *testing.F) {
	for _, s := range seeds(f, "SynthesizeTask", "modern.in") {
		f.Add(s[0])
	}
	for _, m := range malformed {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := PayloadToLegacy(data, "T1")
		checkErr(t, err)
		if err == nil {
			checkEncodes(t, r)
		}
	})
}

func FuzzSynthesizeTask(f *testing.F) {
	for _, s := range seeds(f, "SynthesizeTask", "modern.in") {
		f.Add(s[0], int64(5000), int64(1000))
	}
	f.Add([]byte("{}"), int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, ttl, maxTTL int64) {
		d, err := SynthesizeTask("T1", data, FixedClock(mustTime(defaultNow)), &ttl, maxTTL, nil)
		checkErr(t, err)
		if err != nil {
			return
		}
		checkEncodes(t, d)
		c, err := LegacyCreateTaskResult(d.Task, CreateOptions{})
		checkErr(t, err)
		if err == nil {
			checkEncodes(t, c)
		}
	})
}

func FuzzDecideLegacyCancel(f *testing.F) {
	for _, s := range seeds(f, "DecideLegacyCancel", "legacy.in") {
		f.Add(s[0])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		local, err := legacy.DecodeTask(data)
		if err != nil {
			checkErr(t, err)
			return
		}
		d := DecideLegacyCancel(local, FixedClock(mustTime(defaultNow)))
		switch d.Action {
		case CancelReject:
			checkErr(t, d.Error)
			if d.Error.Code != rpc.CodeInvalidParams || d.ForwardUpstream {
				t.Fatalf("reject must be -32602 without forwarding (L-55): %+v", d)
			}
		case CancelPin:
			if d.Task.Status != legacy.StatusCancelled || !d.ForwardUpstream {
				t.Fatalf("pin must reply cancelled and forward (L-57, L-58): %+v", d)
			}
			if local.Validate() == nil {
				checkEncodes(t, legacy.CancelTaskResult{Task: d.Task})
			}
		default:
			t.Fatalf("invalid action %v", d.Action)
		}
	})
}

func FuzzMergeLegacyTask(f *testing.F) {
	for _, s := range seeds(f, "MergeLegacyTask", "legacy.in") {
		f.Add(s[0], true)
		f.Add(s[0], false)
	}
	f.Fuzz(func(t *testing.T, data []byte, pinned bool) {
		msgs, err := transcript.DecodeStream(data)
		if err != nil || len(msgs) != 2 {
			return
		}
		local, err1 := legacy.DecodeTask(msgs[0])
		next, err2 := legacy.DecodeTask(msgs[1])
		if err1 != nil || err2 != nil {
			return
		}
		m, _ := MergeLegacyTask(local, next, pinned)
		if local.Status.IsTerminal() && m.Status != local.Status {
			t.Fatalf("terminal %q became %q (L-26)", local.Status, m.Status)
		}
		if pinned && !local.Status.IsTerminal() && m.Status != legacy.StatusCancelled {
			t.Fatalf("pinned task became %q (L-59)", m.Status)
		}
		// A local task without createdAt (never encodable) takes the
		// upstream's (testdata/fuzz keeps that input).
		if local.CreatedAt != "" && m.CreatedAt != local.CreatedAt {
			t.Fatalf("createdAt moved from %q to %q (L-18)", local.CreatedAt, m.CreatedAt)
		}
		if lu, err := legacy.ParseTime(local.LastUpdatedAt); err == nil {
			if mu, err := legacy.ParseTime(m.LastUpdatedAt); err != nil || mu.Before(lu) {
				t.Fatalf("lastUpdatedAt went back from %q to %q (L-19)", local.LastUpdatedAt, m.LastUpdatedAt)
			}
		}
	})
}

func FuzzModernCancelReply(f *testing.F) {
	for _, s := range seeds(f, "ModernCancelReply", "legacy.in") {
		f.Add(s[0], true)
		f.Add(s[0], false)
	}
	f.Fuzz(func(t *testing.T, data []byte, known bool) {
		r, err := ModernCancelReply(data, known, "T1")
		if err == nil {
			checkEncodes(t, r)
			return
		}
		// Any other upstream error is relayed (ErrorToModern): an
		// application-defined code may stay, but never one 2026 forbids, and
		// never without a message (testdata/fuzz: code 0, empty message).
		var e *rpc.Error
		if !errors.As(err, &e) || e == nil || strings.TrimSpace(e.Message) == "" {
			t.Fatalf("relayed error %v has no message or is not an *rpc.Error", err)
		}
		if forbiddenModern(e.Code) {
			t.Fatalf("modern client got a code 2026 forbids (M-45): %v", e)
		}
	})
}

func FuzzInitializeResultFromDiscover(f *testing.F) {
	seed1(f, "InitializeResultFromDiscover", "modern.in")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := InitializeResultFromDiscover(data, InitializeOptions{ListTasks: true, ServerInfo: &bridgeInfo})
		checkErr(t, err)
		if err == nil && !json.Valid(r) {
			t.Fatalf("invalid JSON: %s", r)
		}
	})
}

func FuzzDiscoverResultFromInitialize(f *testing.F) {
	seed1(f, "DiscoverResultFromInitialize", "legacy.in")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DiscoverResultFromInitialize(data, DiscoverOptions{TTLMs: 1})
		checkErr(t, err)
		if err == nil {
			checkEncodes(t, r)
		}
	})
}

func FuzzUpstreamRequestMeta(f *testing.F) {
	for _, s := range seeds(f, "UpstreamRequestMeta", "legacy.in") {
		f.Add([]byte(initParams(s[0])), "")
		f.Add([]byte(initParams(s[0])), "debug")
	}
	f.Add([]byte(`{"capabilities":{"experimental":{"x":1}}}`), "loud")
	f.Fuzz(func(t *testing.T, data []byte, level string) {
		m, err := UpstreamRequestMeta(data, level, &bridgeInfo)
		checkErr(t, err)
		if err != nil {
			return
		}
		checkEncodes(t, m)
		if !m.TasksDeclared() {
			t.Fatal("upstream _meta does not declare the tasks extension (M-20)")
		}
	})
}

func FuzzLegacyInitializeParams(f *testing.F) {
	for _, s := range seeds(f, "LegacyInitializeParams", "modern.in") {
		f.Add(params(s[0]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		meta, err := modern.DecodeRequestMeta(data)
		if err != nil {
			checkErr(t, err)
			return
		}
		r, err := LegacyInitializeParams(meta, bridgeInfo)
		checkErr(t, err)
		if err == nil && !json.Valid(r) {
			t.Fatalf("invalid JSON: %s", r)
		}
	})
}

func FuzzToolsListToLegacy(f *testing.F) {
	seed1(f, "ToolsListToLegacy", "modern.in")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ToolsListToLegacy(data, func(n string) bool { return n == "deploy" })
		checkErr(t, err)
		if err == nil && !json.Valid(r) {
			t.Fatalf("invalid JSON: %s", r)
		}
	})
}

func FuzzToolsListToModern(f *testing.F) {
	seed1(f, "ToolsListToModern", "legacy.in")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, _, err := ToolsListToModern(data, 5, "")
		checkErr(t, err)
		if err == nil && !json.Valid(r) {
			t.Fatalf("invalid JSON: %s", r)
		}
	})
}

func FuzzRequestToModern(f *testing.F) {
	for _, s := range seeds(f, "RequestToModern", "legacy.in") {
		var r struct{ Method string }
		_ = json.Unmarshal(s[0], &r)
		f.Add(r.Method, params(s[0]), "")
		f.Add(r.Method, params(s[0]), "required")
	}
	f.Add("tools/call", []byte(`{"name":"x","task":[]}`), "bogus")
	f.Fuzz(func(t *testing.T, method string, data []byte, support string) {
		u, err := RequestToModern(method, data, bridgeMeta(), legacy.TaskSupport(support))
		if d := preparedDiff(method, data, bridgeMeta(), legacy.TaskSupport(support), u, err); d != "" {
			t.Fatal(d)
		}
		checkErr(t, err)
		if err != nil {
			return
		}
		if !json.Valid(u.Params) {
			t.Fatalf("invalid params JSON: %s", u.Params)
		}
		if _, task, present, err := legacy.SplitTaskParam(u.Params); err != nil || present || task != nil {
			t.Fatalf("upstream params still carry task (M-34): %s", u.Params)
		}
	})
}

func FuzzToolsCallToLegacy(f *testing.F) {
	for _, s := range seeds(f, "ToolsCallToLegacy", "modern.in") {
		f.Add(params(s[0]), "optional", true)
		f.Add(params(s[0]), "required", true)
		f.Add(params(s[0]), "", false)
	}
	f.Fuzz(func(t *testing.T, data []byte, support string, serverToolsCall bool) {
		c, err := ToolsCallToLegacy(data, legacy.TaskSupport(support), serverToolsCall)
		checkErr(t, err)
		if err == nil && !json.Valid(c.Params) {
			t.Fatalf("invalid params JSON: %s", c.Params)
		}
	})
}

func FuzzClassifyUpstreamResult(f *testing.F) {
	for _, s := range seeds(f, "ClassifyUpstreamResult", "modern.in") {
		f.Add("tools/call", s[0])
		f.Add("prompts/get", s[0])
	}
	f.Fuzz(func(t *testing.T, method string, data []byte) {
		_, err := ClassifyUpstreamResult(method, data)
		checkErr(t, err)
		if err == nil {
			r, err := ResultToLegacy(data)
			checkErr(t, err)
			if err == nil && !json.Valid(r) {
				t.Fatalf("invalid JSON: %s", r)
			}
		}
	})
}

func FuzzMRTRRetryParams(f *testing.F) {
	for _, s := range seeds(f, "MRTRRetryParams", "modern.in", "modern.input-required", "modern.answers") {
		f.Add(params(s[0]), s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, original, ir, answers []byte) {
		a, err := modern.DecodeInputResponses(answers)
		if err != nil {
			checkErr(t, err)
			return
		}
		r, err := MRTRRetryParams(original, ir, a)
		checkErr(t, err)
		if err == nil && !json.Valid(r) {
			t.Fatalf("invalid JSON: %s", r)
		}
	})
}

func FuzzInputRequestToLegacy(f *testing.F) {
	for _, s := range seeds(f, "InputRequestToLegacy", "modern.in") {
		f.Add(s[0], "T1")
		f.Add(s[0], "")
	}
	caps := modern.ClientCapabilities{}
	all := modern.Object{}
	caps.Elicitation = &modern.Object{"form": json.RawMessage("{}"), "url": json.RawMessage("{}")}
	caps.Sampling, caps.Roots = &all, &all
	f.Fuzz(func(t *testing.T, data []byte, taskID string) {
		g, err := modern.DecodeGetTaskResult(data)
		if err != nil {
			checkErr(t, err)
			return
		}
		ids := &Counter{}
		for _, k := range g.InputRequests.Keys() {
			sr, err := InputRequestToLegacy(taskID, k, g.InputRequests[k], caps, ids)
			checkErr(t, err)
			if err != nil {
				continue
			}
			checkEncodes(t, sr.Request)
			if taskID != "" {
				if id, ok, err := legacy.RelatedTaskOf(sr.Request.Params); err != nil || !ok || id != taskID {
					t.Fatalf("side-channel request without related-task _meta (L-33): %s", sr.Request.Params)
				}
			}
		}
	})
}

func FuzzInputResponseFromLegacy(f *testing.F) {
	reqs := []modern.InputRequest{
		{Method: "elicitation/create", Params: json.RawMessage(`{"message":"m","requestedSchema":{"type":"object"}}`)},
		{Method: "sampling/createMessage", Params: json.RawMessage(`{"messages":[],"maxTokens":1}`)},
		{Method: "roots/list"},
	}
	for _, s := range seeds(f, "InputResponseFromLegacy", "legacy.in") {
		for i := range reqs {
			f.Add(uint8(i), s[0])
		}
	}
	f.Add(uint8(1), []byte(`{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}}`))
	f.Add(uint8(2), []byte(`{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		req := reqs[int(which)%len(reqs)]
		a, err := InputResponseFromLegacy(req, data)
		checkErr(t, err)
		if err != nil {
			return
		}
		p, err := TasksUpdateParams("T1", modern.InputResponses{"k": a}, bridgeMeta())
		checkErr(t, err)
		if err == nil {
			checkEncodes(t, p)
		}
	})
}

func FuzzInputRequestFromLegacy(f *testing.F) {
	seed1(f, "InputRequestFromLegacy", "legacy.in")
	for _, s := range seeds(f, "GetTaskResultToModern", "legacy.pending") {
		if s[0] != nil {
			msgs, _ := transcript.DecodeStream(s[0])
			for _, m := range msgs {
				f.Add([]byte(m))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := InputRequestFromLegacy(data, &Counter{Prefix: "k"})
		checkErr(t, err)
		if err == nil {
			checkEncodes(t, modern.InputRequests{e.Key: e.Request})
		}
	})
}

func FuzzInputResponseToLegacy(f *testing.F) {
	f.Add(uint8(0), []byte(`{"action":"accept","content":{"a":1}}`))
	f.Add(uint8(1), []byte(`{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}`))
	f.Add(uint8(2), []byte(`{"roots":[{"uri":"file:///"}],"resultType":"complete"}`))
	f.Add(uint8(0), []byte(`{"action":"maybe"}`))
	reqs := []modern.InputRequest{{Method: "elicitation/create"}, {Method: "sampling/createMessage"}, {Method: "roots/list"}}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		r, err := InputResponseToLegacy(reqs[int(which)%len(reqs)], data)
		checkErr(t, err)
		if err == nil && !json.Valid(r) {
			t.Fatalf("invalid JSON: %s", r)
		}
		e := InputEntry{Key: "k", Request: reqs[int(which)%len(reqs)], LegacyID: legacy.IntID(int64(which)), TaskID: "T"}
		resp, err := e.Response(data)
		checkErr(t, err)
		if err == nil {
			if id, ok, _ := legacy.RelatedTaskOf(resp.Result); !ok || id != "T" {
				t.Fatalf("response to a task's request lacks related-task meta (L-32): %s", resp.Result)
			}
		}
	})
}

func FuzzGetTaskResultToModern(f *testing.F) {
	for _, s := range seeds(f, "GetTaskResultToModern", "legacy.in", "legacy.payload") {
		f.Add(s[0], s[1])
	}
	for _, s := range seeds(f, "TaskNotificationToModern", "legacy.in", "legacy.payload") {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, task, payload []byte) {
		var outcome *LegacyOutcome
		if len(payload) > 0 {
			o, err := LegacyOutcomeFromResponse(payload)
			checkErr(t, err)
			if err != nil {
				return
			}
			outcome = &o
		}
		r, err := GetTaskResultToModern(task, outcome, modern.InputRequests{"k": {Method: "roots/list"}})
		checkErr(t, err)
		if err != nil {
			return
		}
		checkEncodes(t, r)
		n, err := TaskNotificationToModern(r.DetailedTask, mustID("s"))
		checkErr(t, err)
		if err == nil {
			checkEncodes(t, n)
		}
	})
}

func FuzzSelectInputResponses(f *testing.F) {
	for _, s := range seeds(f, "SelectInputResponses", "modern.in", "modern.update") {
		f.Add(s[0], params(s[1]))
	}
	f.Fuzz(func(t *testing.T, task, update []byte) {
		g, err := modern.DecodeGetTaskResult(task)
		if err != nil {
			return
		}
		u, err := modern.DecodeUpdateTaskParams(update)
		if err != nil {
			checkErr(t, err)
			return
		}
		accept, ignored := SelectInputResponses(g.InputRequests, map[string]bool{"age": true}, u.InputResponses)
		if len(accept)+len(ignored) != len(u.InputResponses) {
			t.Fatalf("lost answers: %d + %d != %d", len(accept), len(ignored), len(u.InputResponses))
		}
		for k := range accept {
			if _, ok := g.InputRequests[k]; !ok || k == "age" {
				t.Fatalf("forwarded a non-outstanding or answered key %q (M-58)", k)
			}
		}
	})
}

func FuzzErrorMapping(f *testing.F) {
	for _, s := range seeds(f, "ErrorToLegacy", "modern.in") {
		f.Add(s[0], "tools/call", false)
		f.Add(s[0], "resources/read", true)
	}
	for _, s := range seeds(f, "ErrorToModern", "legacy.in") {
		f.Add(s[0], "resources/read", false)
	}
	f.Fuzz(func(t *testing.T, data []byte, method string, task bool) {
		r, err := legacy.DecodeResponse(data)
		if err != nil || r.Error == nil {
			return
		}
		l := ErrorToLegacy(method, task, r.Error)
		if l == nil || l.Code == rpc.CodeHeaderMismatch || l.Code == rpc.CodeUnsupportedProtocolVersion ||
			l.Code == rpc.CodeMissingRequiredClientCapability || l.Code == modern.CodeDraftMissingCapability {
			t.Fatalf("legacy client got a 2026-only code: %v", l)
		}
		m := ErrorToModern(method, r.Error)
		if m == nil || forbiddenModern(m.Code) {
			t.Fatalf("modern client got a code 2026 forbids (M-45): %v", m)
		}
		if strings.TrimSpace(l.Message) == "" || strings.TrimSpace(m.Message) == "" {
			t.Fatalf("mapped errors without a message: %v / %v (L-67, M-62)", l, m)
		}
		if !bytes.Equal(l.Data, r.Error.Data) || !bytes.Equal(m.Data, r.Error.Data) {
			t.Fatalf("error data lost: %s → %s / %s", r.Error.Data, l.Data, m.Data)
		}
	})
}

func FuzzCheckModernTaskRequest(f *testing.F) {
	for _, s := range seeds(f, "CheckModernTaskRequest", "modern.in") {
		var r struct{ Method string }
		_ = json.Unmarshal(s[0], &r)
		f.Add(r.Method, params(s[0]))
	}
	f.Fuzz(func(t *testing.T, method string, data []byte) {
		_, err := CheckModernTaskRequest(method, data)
		checkErr(t, err)
	})
}

func FuzzLegacyTaskID(f *testing.F) {
	for _, s := range seeds(f, "LegacyTaskID", "legacy.in") {
		var r struct{ Method string }
		_ = json.Unmarshal(s[0], &r)
		f.Add(r.Method, params(s[0]))
	}
	f.Fuzz(func(t *testing.T, method string, data []byte) {
		id, err := LegacyTaskID(method, data)
		checkErr(t, err)
		if err == nil && id == "" {
			t.Fatal("empty taskId accepted (L-38)")
		}
	})
}

func FuzzResultToModern(f *testing.F) {
	methods := []string{"tools/call", "resources/read", "prompts/get", "prompts/list"}
	for _, s := range seeds(f, "ResultToModern", "legacy.in") {
		f.Add(uint8(0), s[0])
		f.Add(uint8(1), s[0])
	}
	for _, m := range malformed {
		f.Add(uint8(2), m)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		method := methods[int(which)%len(methods)]
		r, err := ResultToModern(method, data, 1000, "")
		checkErr(t, err)
		if err != nil {
			return
		}
		rt, err := modern.ClassifyResultFor(method, r, false)
		if err != nil || rt != modern.ResultComplete {
			t.Fatalf("result %s classifies as %q, %v; want complete (M-41)", r, rt, err)
		}
		if _, ok, _ := legacy.RelatedTaskOf(r); ok {
			t.Fatalf("related-task key reached a modern client: %s", r)
		}
	})
}

// forbiddenModern reports a code a 2026-07-28 implementation must not emit
// (M-45): -32002, -32042, the draft -32003 and undefined -32020..-32099 ones.
// Relayed from a legacy peer, even -32020..-32022 mean nothing, so the whole
// range counts.
func forbiddenModern(code int64) bool {
	switch code {
	case rpc.CodeLegacyResourceNotFound, codeURLElicitationRequired, modern.CodeDraftMissingCapability:
		return true
	}
	return code <= -32020 && code >= -32099
}

// preparedDiff describes how RequestToModernPrepared with meta prepared
// differs from RequestToModern's u, err ("" when it does not): the legacy
// face stamps its session's meta prepared, and must send the same bytes and
// answer the same errors (M-01, M-37).
func preparedDiff(method string, params []byte, meta modern.RequestMeta, support legacy.TaskSupport, u UpstreamRequest, err error) string {
	pu, perr := RequestToModernPrepared(method, params, modern.PrepareRequestMeta(meta), support)
	if (err == nil) != (perr == nil) {
		return fmt.Sprintf("%s %s: RequestToModern err %v, prepared err %v", method, params, err, perr)
	}
	if err != nil {
		if e, pe := rpc.As(err), rpc.As(perr); e.Code != pe.Code || e.Message != pe.Message || !reflect.DeepEqual(e.Data, pe.Data) {
			return fmt.Sprintf("%s %s: errors differ:\nfull     %d %s\nprepared %d %s", method, params, e.Code, e.Message, pe.Code, pe.Message)
		}
		return ""
	}
	if string(u.Params) != string(pu.Params) || u.Method != pu.Method || u.TaskRequested != pu.TaskRequested ||
		!reflect.DeepEqual(u.RequestedTTL, pu.RequestedTTL) {
		return fmt.Sprintf("%s %s: requests differ:\nfull     %+v %s\nprepared %+v %s", method, params, u, u.Params, pu, pu.Params)
	}
	return ""
}
