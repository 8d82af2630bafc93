package legacyface_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// A plain tools/call (no "task") whose upstream task asks for an elicitation
// the client did not declare ends at once with the -32600 naming the
// missing capability, not after the task's ttl with a "Task not found" for
// an id the client never saw; the upstream task is cancelled (L-57, L-82).
func TestUndeclaredInputFailsPlainCallPromptly(t *testing.T) {
	// Far below the demo task's 1 h ttl: a hang fails the test.
	ctx := ctxT(t, 15*time.Second)
	up := startUpstream(t, demo.Options{IgnoreClientCapabilities: true})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, map[string]any{"sampling": map[string]any{}})
	c.setHandler(func(method string, _ json.RawMessage) (any, *rpc.Error) {
		t.Errorf("the client was sent %s, which it did not declare", method)
		return nil, rpc.Errorf(rpc.CodeInternalError, "not declared")
	})
	r := c.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Q?"}})
	if r.Err == nil {
		t.Fatalf("tools/call succeeded: %s", r.Envelope)
	}
	if r.Err.Code != rpc.CodeInvalidRequest || !strings.Contains(r.Err.Message, `"elicitation"`) {
		t.Errorf("error = %d %q, want -32600 naming elicitation", r.Err.Code, r.Err.Message)
	}
	if !bytes.Contains(r.Err.Data, []byte(`"requiredCapabilities":{"elicitation":{"form":{}}}`)) {
		t.Errorf("error data = %s, want requiredCapabilities", r.Err.Data)
	}
	if strings.Contains(strings.ToLower(r.Err.Message), "task") {
		t.Errorf("a plain call's error mentions a task: %q", r.Err.Message)
	}
	up.rec.awaitHit(t, ctx, "tasks/cancel")
}
