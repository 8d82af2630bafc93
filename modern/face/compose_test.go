package face_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/legacy/upstream/fixture"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// MRTR → task composition from a legacy server that creates its task first
// and asks inside it before answering the tools/call (its CreateTaskResult
// says input_required; the elicitation comes on the tasks/result side
// channel). Conformance tasks-mrtr-composition: round 1 is an
// InputRequiredResult without taskId (M-54), round 2 — the retry with the
// answer and the echoed requestState — is the CreateTaskResult without
// requestState or inputRequests, and the task's result carries the answer.
func TestMRTRCompositionTaskFirst_M54(t *testing.T) {
	e := newEnv(t, envOpts{fixture: func(o *fixture.Options) { o.TaskFirstCompose = true }})
	ctx := ctxT(t)
	call := map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{}}
	r1 := e.rpc(ctx, "tools/call", call, withTasks).ok(t)
	if r1["resultType"] != "input_required" || r1["taskId"] != nil {
		t.Fatalf("round 1: %v, want an InputRequiredResult without taskId", r1)
	}
	reqs, _ := r1["inputRequests"].(map[string]any)
	state, _ := r1["requestState"].(string)
	if len(reqs) != 1 || state == "" {
		t.Fatalf("round 1: inputRequests %v, requestState %q", reqs, state)
	}
	var key string
	for k, v := range reqs {
		key = k
		if m, _ := v.(map[string]any); m["method"] != "elicitation/create" {
			t.Fatalf("round 1 asks %v, want elicitation/create", v)
		}
	}
	retry := map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{}, "requestState": state,
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}}
	r2 := e.rpc(ctx, "tools/call", retry, withTasks).ok(t)
	id, _ := r2["taskId"].(string)
	if r2["resultType"] != "task" || id == "" || r2["requestState"] != nil || r2["inputRequests"] != nil {
		t.Fatalf("round 2: %v, want a CreateTaskResult without requestState or inputRequests", r2)
	}
	d := e.pollUntil(ctx, id, withTasks, terminal)
	res, _ := d["result"].(map[string]any)
	if d["status"] != "completed" || !strings.Contains(resultTextOf(res), "Hello, Alice!") {
		t.Fatalf("final: %v, want completed with the MRTR answer", d)
	}
	if n := e.fx.Stats().TasksCreated; n != 1 {
		t.Errorf("upstream tasks created: %d, want 1 (the retry resumes the task the first round bound)", n)
	}
}

// A client that did not declare elicitation is not handed the round: -32021
// naming it (M-39), and the upstream task nobody can answer is cancelled.
func TestMRTRCompositionTaskFirstUndeclared_M39(t *testing.T) {
	e := newEnv(t, envOpts{fixture: func(o *fixture.Options) { o.TaskFirstCompose = true }})
	ctx := ctxT(t)
	r := e.rpc(ctx, "tools/call", map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{}}, clientCaps{tasks: true})
	if r.errCode != rpc.CodeMissingRequiredClientCapability || r.status != http.StatusBadRequest ||
		!bytes.Contains(r.errData, []byte(`"elicitation":{"form":{}}`)) {
		t.Fatalf("without elicitation: HTTP %d %s, want 400 -32021 naming form elicitation", r.status, r.body)
	}
	if n := e.fx.Stats().TasksCancel; n != 1 {
		t.Errorf("upstream tasks/cancel: %d, want 1 (nobody could answer the task)", n)
	}
}

// resultTextOf is the first text content of a CallToolResult.
func resultTextOf(res map[string]any) string {
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	c, _ := content[0].(map[string]any)
	s, _ := c["text"].(string)
	return s
}
