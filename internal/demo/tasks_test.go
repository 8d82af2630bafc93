package demo

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

var hex128 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func textOf(t *testing.T, result json.RawMessage) (string, bool) {
	t.Helper()
	r := decode[struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}](t, result)
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("want one text block, got %s", result)
	}
	return r.Content[0].Text, r.IsError
}

func TestDiscoverAdvertisesExtension_M36_M49(t *testing.T) {
	v := schemacheck.Load(t)
	_, _, url := startServer(t, Options{})
	r := rawCall{Method: "server/discover", NoTasks: true}.do(t, url)
	if r.Status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", r.Status, r.Body)
	}
	if got := r.Header.Get("X-Accel-Buffering"); got != "no" {
		t.Errorf("X-Accel-Buffering = %q, want no (M-43)", got)
	}
	res := r.result(t)
	v.Check(t, schemacheck.Modern, "DiscoverResult", res)
	d := decode[struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}](t, res)
	if len(d.SupportedVersions) != 1 || d.SupportedVersions[0] != ProtocolVersion {
		t.Errorf("supportedVersions = %v, want [%s] (modern-only)", d.SupportedVersions, ProtocolVersion)
	}
	var ext map[string]json.RawMessage
	_ = json.Unmarshal(d.Capabilities["extensions"], &ext)
	if string(ext[TasksExtension]) != "{}" {
		t.Errorf("capabilities.extensions[%q] = %s, want {} (M-49)", TasksExtension, ext[TasksExtension])
	}
	if _, ok := d.Meta["io.modelcontextprotocol/serverInfo"]; !ok {
		t.Errorf("no _meta.serverInfo (M-41)")
	}
}

func TestEchoIsSynchronous(t *testing.T) {
	v := schemacheck.Load(t)
	_, _, url := startServer(t, Options{})
	r := callTool(t, url, "echo", map[string]any{"text": "hello"}, rawCall{})
	v.Check(t, schemacheck.Modern, "CallToolResultResponse", r.Raw)
	res := r.result(t)
	if text, isErr := textOf(t, res); text != "hello" || isErr {
		t.Errorf("echo = %q isError=%v", text, isErr)
	}
	if rt := decode[struct {
		ResultType string `json:"resultType"`
	}](t, res).ResultType; rt != "complete" {
		t.Errorf("resultType = %q, want complete", rt)
	}
	// echo works without the extension too: it never returns a task.
	res = callTool(t, url, "echo", map[string]any{"text": "x"}, rawCall{NoTasks: true}).result(t)
	if text, _ := textOf(t, res); text != "x" {
		t.Errorf("echo without extension = %q", text)
	}
}

func TestSlowTaskDurableBeforeReply_M53(t *testing.T) {
	v := schemacheck.Load(t)
	s, clk, url := startServer(t, Options{PollInterval: 7 * time.Millisecond, TTL: time.Minute})
	id, created := createTask(t, url, "slow_task", map[string]any{"ms": 250, "text": "done"}, rawCall{})
	v.Check(t, schemacheck.Ext, "CreateTaskResult", created)
	if !hex128.MatchString(id) {
		t.Errorf("task id %q is not 128 random bits in hex", id)
	}
	c := decode[detailed](t, created)
	if c.Status != modern.StatusWorking || c.PollIntervalMs == nil || *c.PollIntervalMs != 7 || c.TTLMs == nil || *c.TTLMs != 60000 {
		t.Errorf("CreateTaskResult = %s", created)
	}
	if _, ok := c.Meta["io.modelcontextprotocol/serverInfo"]; !ok {
		t.Errorf("CreateTaskResult lacks _meta.serverInfo (M-41)")
	}

	// The very next tasks/get resolves (M-53).
	d, raw := getTask(t, url, id)
	v.Check(t, schemacheck.Ext, "GetTaskResult", raw)
	if d.ResultType != "complete" || d.Status != modern.StatusWorking || d.Result != nil {
		t.Errorf("tasks/get while working = %s", raw)
	}
	clk.Advance(249 * time.Millisecond)
	if d, _ := getTask(t, url, id); d.Status != modern.StatusWorking {
		t.Fatalf("completed early: %s", d.Status)
	}
	clk.Advance(time.Millisecond)
	d, raw = getTask(t, url, id)
	v.Check(t, schemacheck.Ext, "GetTaskResult", raw)
	if d.Status != modern.StatusCompleted {
		t.Fatalf("status after 250ms = %s", d.Status)
	}
	if text, isErr := textOf(t, d.Result); text != "done" || isErr {
		t.Errorf("result = %q isError=%v", text, isErr)
	}
	if got := s.GetCount(id); got != 3 {
		t.Errorf("GetCount = %d, want 3", got)
	}
	// Terminal states never change.
	clk.Advance(30 * time.Second) // still within the 1 min TTL
	if d, _ := getTask(t, url, id); d.Status != modern.StatusCompleted {
		t.Errorf("status changed after completion: %s", d.Status)
	}
}

func TestTaskIDsAreUnique(t *testing.T) {
	_, _, url := startServer(t, Options{})
	seen := map[string]bool{}
	for range 20 {
		id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 1000, "text": "x"}, rawCall{})
		if seen[id] {
			t.Fatalf("duplicate task id %s", id)
		}
		seen[id] = true
	}
}

func TestCompleteNowDrivesDelayedTasks(t *testing.T) {
	s, clk, url := startServer(t, Options{})
	id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 60000, "text": "early"}, rawCall{})
	if clk.Pending() != 1 {
		t.Fatalf("pending timers = %d, want 1", clk.Pending())
	}
	if !s.CompleteNow(id) {
		t.Fatal("CompleteNow found nothing to complete")
	}
	if clk.Pending() != 0 {
		t.Errorf("timer still pending after CompleteNow")
	}
	d, _ := getTask(t, url, id)
	if text, _ := textOf(t, d.Result); d.Status != modern.StatusCompleted || text != "early" {
		t.Errorf("after CompleteNow: %s %s", d.Status, d.Result)
	}
	if s.CompleteNow(id) {
		t.Error("CompleteNow completed a terminal task twice")
	}
}

func TestZeroDelayEndsBeforeFirstGet(t *testing.T) {
	_, _, url := startServer(t, Options{})
	id, created := createTask(t, url, "slow_task", map[string]any{"ms": 0, "text": "now"}, rawCall{})
	if st := decode[detailed](t, created).Status; st != modern.StatusWorking {
		t.Errorf("CreateTaskResult status %s, want working (the creation snapshot)", st)
	}
	if d, _ := getTask(t, url, id); d.Status != modern.StatusCompleted {
		t.Errorf("ms=0 task not completed at first get: %s", d.Status)
	}
}

func TestFailTaskIsFailedWithJSONRPCError_M56(t *testing.T) {
	v := schemacheck.Load(t)
	_, clk, url := startServer(t, Options{})
	id, _ := createTask(t, url, "fail_task", map[string]any{"reason": "rate limit exceeded"}, rawCall{})
	d, raw := getTask(t, url, id)
	v.Check(t, schemacheck.Ext, "GetTaskResult", raw)
	if d.Status != modern.StatusFailed || d.Error == nil || d.Error.Code != rpc.CodeInternalError || d.Error.Message != "rate limit exceeded" {
		t.Fatalf("fail_task: %s", raw)
	}
	if !strings.Contains(d.StatusMessage, "rate limit exceeded") {
		t.Errorf("statusMessage %q does not explain the failure", d.StatusMessage)
	}
	// With ms the failure comes later.
	id, _ = createTask(t, url, "fail_task", map[string]any{"reason": "later", "ms": 10}, rawCall{})
	if d, _ := getTask(t, url, id); d.Status != modern.StatusWorking {
		t.Errorf("fail_task with ms: %s before the delay", d.Status)
	}
	clk.Advance(10 * time.Millisecond)
	if d, _ := getTask(t, url, id); d.Status != modern.StatusFailed {
		t.Errorf("fail_task with ms: %s after the delay", d.Status)
	}
}

func TestErrorTaskIsCompletedWithIsError_M56(t *testing.T) {
	v := schemacheck.Load(t)
	_, _, url := startServer(t, Options{})
	id, _ := createTask(t, url, "error_task", map[string]any{"reason": "bad input file"}, rawCall{})
	d, raw := getTask(t, url, id)
	v.Check(t, schemacheck.Ext, "GetTaskResult", raw)
	if d.Status != modern.StatusCompleted || d.Error != nil {
		t.Fatalf("error_task must be completed, not failed (M-56): %s", raw)
	}
	if text, isErr := textOf(t, d.Result); !isErr || text != "bad input file" {
		t.Errorf("result %s", d.Result)
	}
}

var elicitCaps = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}

func TestElicitTask_M55_M57_M58(t *testing.T) {
	v := schemacheck.Load(t)
	s, _, url := startServer(t, Options{})
	id, _ := createTask(t, url, "elicit_task", map[string]any{"question": "Your name?"}, rawCall{Caps: elicitCaps})
	d, raw := getTask(t, url, id)
	v.Check(t, schemacheck.Ext, "GetTaskResult", raw)
	if d.Status != modern.StatusInputRequired || len(d.InputRequests) != 1 {
		t.Fatalf("elicit_task: %s", raw)
	}
	var key string
	for k, req := range d.InputRequests {
		key = k
		r := decode[struct {
			Method string `json:"method"`
			Params struct {
				Mode            string         `json:"mode"`
				Message         string         `json:"message"`
				RequestedSchema map[string]any `json:"requestedSchema"`
			} `json:"params"`
		}](t, req)
		if r.Method != "elicitation/create" || r.Params.Mode != "form" || r.Params.Message != "Your name?" {
			t.Errorf("input request %s", req)
		}
	}
	// The same key on every poll until answered (M-55).
	if d2, _ := getTask(t, url, id); d2.InputRequests[key] == nil {
		t.Errorf("key %s not repeated on the next poll", key)
	}

	// Unknown keys are ignored with an empty ack (M-58).
	ack := taskCall(t, url, "tasks/update", id, map[string]any{"inputResponses": map[string]any{
		"nope": map[string]any{"action": "accept", "content": map[string]any{"answer": "x"}},
	}}, rawCall{}).result(t)
	v.Check(t, schemacheck.Ext, "UpdateTaskResult", ack)
	if d, _ := getTask(t, url, id); d.Status != modern.StatusInputRequired {
		t.Fatalf("unknown key changed the task: %s", d.Status)
	}

	ack = taskCall(t, url, "tasks/update", id, map[string]any{"inputResponses": map[string]any{
		key: map[string]any{"action": "accept", "content": map[string]any{"answer": "Luca"}},
	}}, rawCall{}).result(t)
	v.Check(t, schemacheck.Ext, "UpdateTaskResult", ack)
	if keys := decode[map[string]json.RawMessage](t, ack); len(keys) != 2 {
		t.Errorf("ack is not empty (resultType and _meta only): %s", ack)
	}
	d, raw = getTask(t, url, id)
	v.Check(t, schemacheck.Ext, "GetTaskResult", raw)
	if text, isErr := textOf(t, d.Result); d.Status != modern.StatusCompleted || text != "Luca" || isErr {
		t.Fatalf("after answer: %s", raw)
	}
	// Answering again is a duplicate: ignored, counted.
	taskCall(t, url, "tasks/update", id, map[string]any{"inputResponses": map[string]any{
		key: map[string]any{"action": "accept", "content": map[string]any{"answer": "Other"}},
	}}, rawCall{}).result(t)
	if d, _ := getTask(t, url, id); d.Status != modern.StatusCompleted {
		t.Errorf("duplicate answer changed the task")
	}
	c := s.Counters()
	if c.TasksUpdate != 3 || c.InputResponses != 1 || c.DuplicateKeys != 1 || c.UnknownKeys != 1 {
		t.Errorf("counters = %+v", c)
	}
}

func TestElicitTaskPartialSetsAndLifetimeKeys_M57_M58(t *testing.T) {
	_, _, url := startServer(t, Options{})
	id, _ := createTask(t, url, "elicit_task", map[string]any{"question": "Q", "count": 2, "rounds": 2}, rawCall{Caps: elicitCaps})
	answer := func(key, a string) {
		taskCall(t, url, "tasks/update", id, map[string]any{"inputResponses": map[string]any{
			key: map[string]any{"action": "accept", "content": map[string]any{"answer": a}},
		}}, rawCall{}).result(t)
	}
	d, _ := getTask(t, url, id)
	if len(d.InputRequests) != 2 {
		t.Fatalf("round 1 has %d outstanding requests, want all 2 (M-55)", len(d.InputRequests))
	}
	seen := map[string]bool{}
	var round1 []string
	for k := range d.InputRequests {
		round1 = append(round1, k)
		seen[k] = true
	}
	if round1[0] > round1[1] {
		round1[0], round1[1] = round1[1], round1[0]
	}
	answer(round1[1], "b") // a partial set: the task stays input_required (M-58)
	d, _ = getTask(t, url, id)
	if d.Status != modern.StatusInputRequired || len(d.InputRequests) != 1 || d.InputRequests[round1[0]] == nil {
		t.Fatalf("after a partial answer: %s with %v", d.Status, d.InputRequests)
	}
	answer(round1[0], "a")
	d, _ = getTask(t, url, id)
	if d.Status != modern.StatusInputRequired || len(d.InputRequests) != 2 {
		t.Fatalf("round 2: %s with %d requests", d.Status, len(d.InputRequests))
	}
	var round2 []string
	for k := range d.InputRequests {
		if seen[k] {
			t.Fatalf("key %s reused after its answer was delivered (M-57)", k)
		}
		round2 = append(round2, k)
	}
	taskCall(t, url, "tasks/update", id, map[string]any{"inputResponses": map[string]any{
		round2[0]: map[string]any{"action": "accept", "content": map[string]any{"answer": "c"}},
		round2[1]: map[string]any{"action": "accept", "content": map[string]any{"answer": "c"}},
	}}, rawCall{}).result(t)
	d, _ = getTask(t, url, id)
	if text, _ := textOf(t, d.Result); d.Status != modern.StatusCompleted || text != "a\nb\nc\nc" {
		t.Fatalf("final: %s %q", d.Status, d.Result)
	}
}

func TestElicitTaskDeclineIsError(t *testing.T) {
	_, _, url := startServer(t, Options{})
	id, _ := createTask(t, url, "elicit_task", map[string]any{"question": "Q"}, rawCall{Caps: elicitCaps})
	d, _ := getTask(t, url, id)
	for k := range d.InputRequests {
		taskCall(t, url, "tasks/update", id, map[string]any{"inputResponses": map[string]any{
			k: map[string]any{"action": "decline"},
		}}, rawCall{}).result(t)
	}
	d, _ = getTask(t, url, id)
	if _, isErr := textOf(t, d.Result); d.Status != modern.StatusCompleted || !isErr {
		t.Errorf("declined elicitation: %s %s", d.Status, d.Result)
	}
}

func TestUpdateRejectsWrongShape(t *testing.T) {
	_, _, url := startServer(t, Options{})
	id, _ := createTask(t, url, "elicit_task", map[string]any{"question": "Q"}, rawCall{Caps: elicitCaps})
	d, _ := getTask(t, url, id)
	var key string
	for k := range d.InputRequests {
		key = k
	}
	for name, resp := range map[string]any{
		"sampling shape":     map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "x"}, "model": "m"},
		"accept sans answer": map[string]any{"action": "accept", "content": map[string]any{}},
		"neither":            map[string]any{"foo": 1},
	} {
		r := taskCall(t, url, "tasks/update", id, map[string]any{"inputResponses": map[string]any{key: resp}}, rawCall{})
		if e := r.rpcErr(t); e.Code != rpc.CodeInvalidParams || r.Status != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d %v, want 400 -32602", name, r.Status, e)
		}
	}
	if d, _ := getTask(t, url, id); d.Status != modern.StatusInputRequired || d.InputRequests[key] == nil {
		t.Errorf("a rejected answer changed the task: %s", d.Status)
	}
	r := taskCall(t, url, "tasks/update", id, nil, rawCall{})
	if e := r.rpcErr(t); e.Code != rpc.CodeInvalidParams {
		t.Errorf("update without inputResponses: %v", e)
	}
}

func TestSampleTask(t *testing.T) {
	v := schemacheck.Load(t)
	_, _, url := startServer(t, Options{})
	caps := map[string]any{"sampling": map[string]any{}}
	id, _ := createTask(t, url, "sample_task", map[string]any{"prompt": "Capital of France?"}, rawCall{Caps: caps})
	d, raw := getTask(t, url, id)
	v.Check(t, schemacheck.Ext, "GetTaskResult", raw)
	if d.Status != modern.StatusInputRequired || len(d.InputRequests) != 1 {
		t.Fatalf("sample_task: %s", raw)
	}
	for k, req := range d.InputRequests {
		v.Check(t, schemacheck.Ext, "CreateMessageRequest", req)
		taskCall(t, url, "tasks/update", id, map[string]any{"inputResponses": map[string]any{k: map[string]any{
			"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "test-model",
		}}}, rawCall{}).result(t)
	}
	d, _ = getTask(t, url, id)
	if text, isErr := textOf(t, d.Result); d.Status != modern.StatusCompleted || text != "Paris" || isErr {
		t.Errorf("sample_task result: %s %s", d.Status, d.Result)
	}
}

func TestCancel_M59(t *testing.T) {
	v := schemacheck.Load(t)
	s, clk, url := startServer(t, Options{})
	id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 100, "text": "x"}, rawCall{})
	ack := taskCall(t, url, "tasks/cancel", id, nil, rawCall{}).result(t)
	v.Check(t, schemacheck.Ext, "CancelTaskResult", ack)
	d, raw := getTask(t, url, id)
	v.Check(t, schemacheck.Ext, "GetTaskResult", raw)
	if d.Status != modern.StatusCancelled {
		t.Fatalf("after cancel: %s", d.Status)
	}
	clk.Advance(time.Second)
	if d, _ := getTask(t, url, id); d.Status != modern.StatusCancelled {
		t.Errorf("the finished work un-cancelled the task: %s", d.Status)
	}
	// Terminal: acknowledged, unchanged.
	done, _ := createTask(t, url, "slow_task", map[string]any{"ms": 0, "text": "x"}, rawCall{})
	taskCall(t, url, "tasks/cancel", done, nil, rawCall{}).result(t)
	if d, _ := getTask(t, url, done); d.Status != modern.StatusCompleted {
		t.Errorf("cancel changed a completed task to %s", d.Status)
	}
	// input_required tasks cancel too, and drop their requests.
	in, _ := createTask(t, url, "elicit_task", map[string]any{"question": "Q"}, rawCall{Caps: elicitCaps})
	taskCall(t, url, "tasks/cancel", in, nil, rawCall{}).result(t)
	if d, _ := getTask(t, url, in); d.Status != modern.StatusCancelled || d.InputRequests != nil {
		t.Errorf("cancelled input task: %s %v", d.Status, d.InputRequests)
	}
	if c := s.Counters(); c.TasksCancel != 3 {
		t.Errorf("TasksCancel = %d", c.TasksCancel)
	}
}

func TestIgnoreCancelOption(t *testing.T) {
	_, clk, url := startServer(t, Options{IgnoreCancel: true})
	id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 100, "text": "x"}, rawCall{})
	taskCall(t, url, "tasks/cancel", id, nil, rawCall{}).result(t)
	if d, _ := getTask(t, url, id); d.Status != modern.StatusWorking {
		t.Fatalf("IgnoreCancel: %s", d.Status)
	}
	clk.Advance(100 * time.Millisecond)
	if d, _ := getTask(t, url, id); d.Status != modern.StatusCompleted {
		t.Errorf("IgnoreCancel: %s after the delay", d.Status)
	}
}

func TestUnknownAndExpiredTasks_M60(t *testing.T) {
	v := schemacheck.Load(t)
	_, clk, url := startServer(t, Options{TTL: time.Second})
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		r := taskCall(t, url, m, "0123456789abcdef0123456789abcdef", map[string]any{"inputResponses": map[string]any{}}, rawCall{})
		if e := r.rpcErr(t); e.Code != rpc.CodeInvalidParams || r.Status != http.StatusBadRequest {
			t.Errorf("%s unknown id: HTTP %d %v, want 400 -32602", m, r.Status, e)
		}
		v.Check(t, schemacheck.Modern, "JSONRPCErrorResponse", r.Raw)
	}
	id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 5000, "text": "x"}, rawCall{})
	clk.Advance(999 * time.Millisecond)
	getTask(t, url, id)
	clk.Advance(time.Millisecond)
	r := taskCall(t, url, "tasks/get", id, nil, rawCall{})
	if e := r.rpcErr(t); e.Code != rpc.CodeInvalidParams {
		t.Errorf("expired task: %v, want -32602 (M-64)", e)
	}
	// An empty taskId is invalid params, not a header error.
	r = rawCall{Method: "tasks/get", Params: map[string]any{}}.do(t, url)
	if e := r.rpcErr(t); e.Code != rpc.CodeInvalidParams {
		t.Errorf("missing taskId: %v", e)
	}
}

func TestUnlimitedTTLIsNull(t *testing.T) {
	v := schemacheck.Load(t)
	_, _, url := startServer(t, Options{TTL: -1})
	id, created := createTask(t, url, "slow_task", map[string]any{"ms": 10, "text": "x"}, rawCall{})
	v.Check(t, schemacheck.Ext, "CreateTaskResult", created)
	if !strings.Contains(string(created), `"ttlMs":null`) {
		t.Errorf("unlimited TTL not sent as null (L-21: ttl is required and nullable): %s", created)
	}
	_, raw := getTask(t, url, id)
	if !strings.Contains(string(raw), `"ttlMs":null`) {
		t.Errorf("tasks/get: %s", raw)
	}
}

func TestBadArguments(t *testing.T) {
	_, _, url := startServer(t, Options{})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"slow_task", map[string]any{"text": "x"}},
		{"slow_task", map[string]any{"ms": -1, "text": "x"}},
		{"slow_task", map[string]any{"ms": 1.5, "text": "x"}},
		{"slow_task", map[string]any{"ms": 10}},
		{"fail_task", map[string]any{}},
		{"error_task", map[string]any{"reason": 3}},
		{"elicit_task", map[string]any{"question": "q", "count": 9}},
		{"sample_task", nil},
	} {
		caps := map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}}
		r := callTool(t, url, c.tool, c.args, rawCall{Caps: caps})
		if e := r.rpcErr(t); e.Code != rpc.CodeInvalidParams || r.Status != http.StatusBadRequest {
			t.Errorf("%s %v: HTTP %d %v, want 400 -32602", c.tool, c.args, r.Status, e)
		}
	}
}
