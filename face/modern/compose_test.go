package modernface_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// A legacy tool that creates its task first and asks inside it (its
// CreateTaskResult says input_required; the elicitation comes on the
// tasks/result side channel), called by a client with the tasks extension:
// the answer is the task (conformance tasks-mrtr-input; the bridge once
// answered with an MRTR round, and the client never got the task it asked
// for), tasks/get shows the question as inputRequests (M-55), tasks/update
// answers it, and the task completes with the answer.
func TestTaskFirstInputRequiredIsATask_M55(t *testing.T) {
	e := newEnv(t, envOpts{fixture: func(o *legacyfixture.Options) { o.TaskFirstCompose = true }})
	ctx := ctxT(t)
	r := e.rpc(ctx, "tools/call", map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{}}, withTasks).ok(t)
	id, _ := r["taskId"].(string)
	if r["resultType"] != "task" || id == "" || r["requestState"] != nil || r["inputRequests"] != nil {
		t.Fatalf("tools/call: %v, want a CreateTaskResult", r)
	}
	d := e.pollUntil(ctx, id, withTasks, func(d map[string]any) bool { return d["status"] == "input_required" || terminal(d) })
	reqs, _ := d["inputRequests"].(map[string]any)
	if d["status"] != "input_required" || len(reqs) != 1 {
		t.Fatalf("tasks/get: %v, want input_required with one input request", d)
	}
	var key string
	for k, v := range reqs {
		key = k
		if m, _ := v.(map[string]any); m["method"] != "elicitation/create" {
			t.Fatalf("the task asks %v, want elicitation/create", v)
		}
	}
	up := e.rpc(ctx, "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}}, withTasks).ok(t)
	if up["resultType"] != "complete" {
		t.Fatalf("tasks/update: %v", up)
	}
	d = e.pollUntil(ctx, id, withTasks, terminal)
	res, _ := d["result"].(map[string]any)
	if d["status"] != "completed" || !strings.Contains(resultTextOf(res), "Hello, Alice!") {
		t.Fatalf("final: %v, want completed with the answer", d)
	}
	if n := e.fx.Stats().TasksCreated; n != 1 {
		t.Errorf("upstream tasks created: %d, want 1", n)
	}
}

// A client with the tasks extension that did not declare elicitation gets
// the task the upstream created (the call is not refused after the tool
// started, and nothing is cancelled behind its back); the task's question
// is what it cannot see: tasks/get answers -32021 naming form elicitation
// with HTTP 400 (M-39).
func TestTaskFirstUndeclaredCapability_M39(t *testing.T) {
	e := newEnv(t, envOpts{fixture: func(o *legacyfixture.Options) { o.TaskFirstCompose = true }})
	ctx := ctxT(t)
	caps := clientCaps{tasks: true}
	r := e.rpc(ctx, "tools/call", map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{}}, caps).ok(t)
	id, _ := r["taskId"].(string)
	if r["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call: %v, want a CreateTaskResult", r)
	}
	for {
		g := e.rpc(ctx, "tasks/get", map[string]any{"taskId": id}, caps)
		if g.errCode == 0 {
			if res := g.ok(t); res["status"] == "working" {
				if ctx.Err() != nil {
					t.Fatal("the task's question never reached the bridge")
				}
				continue
			}
			t.Fatalf("tasks/get: %s, want -32021 once the task asks", g.body)
		}
		if g.errCode != rpc.CodeMissingRequiredClientCapability || g.status != http.StatusBadRequest ||
			!bytes.Contains(g.errData, []byte(`"elicitation":{"form":{}}`)) {
			t.Fatalf("tasks/get: HTTP %d %s, want 400 -32021 naming form elicitation", g.status, g.body)
		}
		break
	}
	if n := e.fx.Stats().TasksCancel; n != 0 {
		t.Errorf("upstream tasks/cancel: %d, want 0", n)
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
