package legacyface_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
)

// go-sdk's own client at 2025-11-25 works through the bridge (handshake and
// a forwarded call).
func TestGoSDKLegacyClient(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := mcp.NewClient(&mcp.Implementation{Name: "legacy-go", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: br.url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Fatalf("protocol %q", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatalf("echo: %v", err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "hi" {
		t.Fatalf("echo: %+v", res.Content)
	}
}

// L-40: tasks/get is answered as application/json, not upgraded to SSE;
// the task flow works end to end.
func TestTasksGetIsJSON_L40(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	r := c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "done"}, "task": map[string]any{}})
	id := taskIDOf(t, r)
	g := c.call(ctx, "tasks/get", map[string]any{"taskId": id})
	if g.ContentType != "application/json" || statusOf(t, g) != "working" {
		t.Fatalf("tasks/get: %s %s", g.ContentType, g.Envelope)
	}
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	res := c.call(ctx, "tasks/result", map[string]any{"taskId": id})
	if res.Status != http.StatusOK || res.Err != nil {
		t.Fatalf("tasks/result: %s", res.Envelope)
	}
	if !bytes.Contains(res.Result, []byte(`"done"`)) || !bytes.Contains(res.Result, []byte(id)) {
		t.Errorf("tasks/result %s", res.Envelope)
	}
	c.checkReceived(t)
}
