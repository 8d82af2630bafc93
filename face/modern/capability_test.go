package modernface_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// M-39 on every path: a request that needs a capability its client did not
// declare gets -32021 with HTTP 400 even when the need shows only after the
// upstream reported progress. The face holds the response (no 200 event
// stream) while a -32021 may still come, so the progress it held goes out
// only with a 200 answer. Before, the progress notification opened the
// stream and the -32021 went out inside it, on HTTP 200.
func TestMissingCapabilityAfterProgressIsHTTP400_M39(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	args := func() map[string]any {
		return map[string]any{"name": "progress_then_ask", "arguments": map[string]any{"question": "Name?"},
			"_meta": map[string]any{"progressToken": "p-1"}}
	}
	r := e.rpc(ctx, "tools/call", args(), clientCaps{tasks: true})
	if r.status != http.StatusBadRequest || r.errCode != rpc.CodeMissingRequiredClientCapability {
		t.Fatalf("progress, then a question the client cannot answer: HTTP %d %s, want 400 and -32021", r.status, r.body)
	}
	if !bytes.Contains(r.errData, []byte(`"requiredCapabilities":{"elicitation":{"form":{}}}`)) || len(r.notifications) != 0 {
		t.Errorf("-32021: data %s, %d notifications; want requiredCapabilities.elicitation.form and no stream", r.errData, len(r.notifications))
	}
	// Declared: the held progress goes out before the 200 answer (an MRTR
	// round), as it would have without the hold.
	ok := e.rpc(ctx, "tools/call", args(), withTasks)
	if ok.status != http.StatusOK || ok.result["resultType"] != "input_required" || len(ok.notifications) != 1 ||
		!bytes.Contains(ok.notifications[0], []byte(`"notifications/progress"`)) {
		t.Fatalf("with elicitation declared: HTTP %d, %d notifications, %s; want the progress, then the round", ok.status, len(ok.notifications), ok.body)
	}
}

// A legacy tool that creates its task and then asks on the tools/call
// stream (with the task's related-task _meta) cannot be refused before it
// runs: nothing in its declaration says it will ask. When the question
// needs a capability the client lacks, the client gets -32021 (HTTP 400) and
// the upstream task — whose id nobody will ever learn — is cancelled with
// tasks/cancel at once (cancelling the tools/call does not stop a created
// task, L-85). Before, it ran on until its ttl.
func TestRefusedCallCancelsItsUpstreamTask(t *testing.T) {
	cancelled := make(chan string, 2)
	e := newEnv(t, envOpts{fixture: func(o *legacyfixture.Options) { o.OnTasksCancel = func(id string) { cancelled <- id } }})
	ctx := ctxT(t)
	r := e.rpc(ctx, "tools/call", map[string]any{"name": "create_then_ask", "arguments": map[string]any{}}, clientCaps{tasks: true})
	if r.status != http.StatusBadRequest || r.errCode != rpc.CodeMissingRequiredClientCapability || r.result != nil {
		t.Fatalf("create_then_ask without elicitation: HTTP %d %s, want 400 and -32021", r.status, r.body)
	}
	ids := e.fx.TaskIDs()
	if len(ids) != 1 {
		t.Fatalf("fixture tasks %v, want the one the call created", ids)
	}
	select {
	case got := <-cancelled:
		if got != ids[0] {
			t.Fatalf("cancelled %s, want %s", got, ids[0])
		}
	case <-ctx.Done():
		t.Fatalf("the upstream task of the refused call was never cancelled (status %s)", e.fx.TaskStatus(ids[0]))
	}
	if st := e.fx.TaskStatus(ids[0]); st != legacy.StatusCancelled {
		t.Errorf("upstream task: %s, want cancelled", st)
	}
}

// Where the need is known before anything runs upstream — a tool whose
// legacy taskSupport is "required", for a request without the tasks
// extension (M-51) — the face refuses before calling the tool: the fixture
// sees no tools/call and creates no task.
func TestRequiredToolRefusedBeforeUpstream_M51(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	r := e.rpc(ctx, "tools/call", map[string]any{"name": "slow_required", "arguments": map[string]any{"ms": 10}}, withoutTasks)
	if r.status != http.StatusBadRequest || r.errCode != rpc.CodeMissingRequiredClientCapability {
		t.Fatalf("required tool without the extension: HTTP %d %s, want 400 and -32021", r.status, r.body)
	}
	var data struct {
		RequiredCapabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"requiredCapabilities"`
	}
	if err := json.Unmarshal(r.errData, &data); err != nil || data.RequiredCapabilities.Extensions["io.modelcontextprotocol/tasks"] == nil {
		t.Errorf("-32021 data %s: want requiredCapabilities.extensions naming the tasks extension", r.errData)
	}
	if st := e.fx.Stats(); st.ToolCalls != 0 || st.TasksCreated != 0 {
		t.Errorf("fixture stats %+v: the refused call reached the upstream", st)
	}
}
