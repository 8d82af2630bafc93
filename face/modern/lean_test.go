package modernface_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
)

// Every method a modern client uses goes through the lean path: go-sdk's
// server is never built, and each answer is a valid 2026-07-28 result.
func TestLeanPathServesEveryMethodWithoutGoSDK(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	v := schemacheck.Load(t)
	check := func(method string, params map[string]any, schema schemacheck.Schema, def string) reply {
		t.Helper()
		r := e.rpc(ctx, method, params, withTasks)
		if r.status != http.StatusOK || r.result == nil {
			t.Fatalf("%s: HTTP %d %s", method, r.status, r.body)
		}
		v.Check(t, schema, def, r.resultJSON(t))
		return r
	}
	check("server/discover", nil, schemacheck.Modern, "DiscoverResult")
	check("tools/list", nil, schemacheck.Modern, "ListToolsResult")
	check("prompts/list", nil, schemacheck.Modern, "ListPromptsResult")
	check("resources/list", nil, schemacheck.Modern, "ListResourcesResult")
	check("resources/templates/list", nil, schemacheck.Modern, "ListResourceTemplatesResult")
	g := check("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Lean"}}, schemacheck.Modern, "CallToolResult")
	if g.result["resultType"] != "complete" || !strings.Contains(string(g.body), "Hello, Lean!") {
		t.Fatalf("sync call %s", g.body)
	}
	// Progress goes out before the answer: the response becomes a stream (M-35).
	p := check("tools/call", map[string]any{"name": "progress_sync", "arguments": map[string]any{"steps": 1},
		"_meta": map[string]any{"progressToken": 9}}, schemacheck.Modern, "CallToolResult")
	if len(p.notifications) != 1 || !strings.Contains(string(p.notifications[0]), `"progressToken":9`) {
		t.Fatalf("progress notifications %s", p.notifications)
	}
	c := check("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 600}}, schemacheck.Ext, "CreateTaskResult")
	id, _ := c.result["taskId"].(string)
	if c.result["resultType"] != "task" || id == "" {
		t.Fatalf("create %s", c.body)
	}
	check("tasks/get", map[string]any{"taskId": id}, schemacheck.Ext, "GetTaskResult")
	u := e.rpc(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{}}, withTasks)
	if u.status != http.StatusOK || u.result == nil {
		t.Fatalf("tasks/update: HTTP %d %s", u.status, u.body)
	}
	check("tasks/cancel", map[string]any{"taskId": id}, schemacheck.Ext, "CancelTaskResult")
	if n := modernface.SDKBuilds(e.face); n != 0 {
		t.Fatalf("go-sdk's server was built %d times for requests the lean path serves", n)
	}
}

// A plain tools/call never builds go-sdk's server: the lean path cannot
// silently fall back for the hot request.
func TestLeanToolsCallBuildsNoGoSDKServer(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	for range 3 {
		e.rpc(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, withTasks).ok(t)
	}
	if n := modernface.SDKBuilds(e.face); n != 0 {
		t.Fatalf("go-sdk's server built %d times by plain tools/call", n)
	}
}

// Bad input keeps its clear JSON-RPC errors: the front answers malformed
// JSON and wrong request shapes itself; params of the wrong type go to
// go-sdk (built for them), which names the member as it always did.
func TestLeanBadInput(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	r := e.request(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`), map[string]string{
		"Mcp-Method": "tools/call", "Mcp-Protocol-Version": "2026-07-28"})
	if r.status != http.StatusBadRequest || r.errCode != -32700 || !strings.Contains(r.errMsg, "Parse error") {
		t.Fatalf("malformed JSON: HTTP %d %s", r.status, r.body)
	}
	r = e.request(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":[]}`), map[string]string{
		"Mcp-Method": "tools/call", "Mcp-Protocol-Version": "2026-07-28"})
	if r.status != http.StatusBadRequest || r.errCode != -32602 {
		t.Fatalf("array params: HTTP %d %s", r.status, r.body)
	}
	// A wrong-typed taskId is the face's own -32602 on the lean path.
	r = e.rpc(ctx, "tasks/get", map[string]any{"taskId": 5}, withTasks)
	if r.status != http.StatusBadRequest || r.errCode != -32602 || !strings.Contains(r.errMsg, "taskId") {
		t.Fatalf("numeric taskId: HTTP %d %s", r.status, r.body)
	}
	if n := modernface.SDKBuilds(e.face); n != 0 {
		t.Fatalf("go-sdk built %d times for input the front answers", n)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call",
		"params": withMeta(map[string]any{"name": 5}, withTasks)})
	r = e.request(ctx, body, nil)
	// go-sdk's answer, as before: with no string name there is no Mcp-Name
	// a client could have sent (M-67).
	if r.status != http.StatusBadRequest || r.errCode != -32020 || !strings.Contains(r.errMsg, "Mcp-Name") {
		t.Fatalf("numeric name: HTTP %d %s", r.status, r.body)
	}
	body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 4, "method": "tools/list",
		"params": withMeta(map[string]any{"cursor": 5}, withTasks)})
	r = e.request(ctx, body, nil)
	if r.status != http.StatusBadRequest || r.errCode != -32602 || !strings.Contains(r.errMsg, "cursor") {
		t.Fatalf("numeric cursor: HTTP %d %s", r.status, r.body)
	}
	if n := modernface.SDKBuilds(e.face); n != 1 {
		t.Fatalf("go-sdk built %d times, want once for the wrong-typed params", n)
	}
	// go-sdk's transport rules stay too: an Accept without event streams.
	body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": withMeta(nil, withTasks)})
	r = e.request(ctx, body, map[string]string{"Accept": "application/json"})
	if r.status != http.StatusBadRequest {
		t.Fatalf("Accept without text/event-stream: HTTP %d %s", r.status, r.body)
	}
}

// The face on its own refuses a body nested deeper than 128 levels with
// -32600 naming the limit, not a parse error (it may be valid JSON).
func TestTooDeepOnItsOwn(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	for _, depth := range []int{200, 20_000} {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"a":` +
			strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}}`)
		r := e.request(ctx, body, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo", "Mcp-Protocol-Version": "2026-07-28"})
		if r.status != http.StatusBadRequest || r.errCode != -32600 || !strings.Contains(r.errMsg, "request nesting is deeper than 128 levels") {
			t.Errorf("depth %d: HTTP %d %s", depth, r.status, r.body)
		}
	}
}

// A wrong Content-Type or Accept gets go-sdk's statuses (415, 400) with a
// JSON-RPC error body saying what to send, not go-sdk's plain text.
func TestMediaRefusalsAreJSONRPC(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	for _, tc := range []struct {
		header map[string]string
		status int
		says   string
	}{
		{map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType, `the Content-Type must be application/json (got "text/plain")`},
		{map[string]string{"Accept": "text/html"}, http.StatusBadRequest, `the Accept header must name both application/json and text/event-stream (got "text/html")`},
	} {
		h := map[string]string{"Mcp-Method": "tools/list", "Mcp-Protocol-Version": "2026-07-28"}
		for k, v := range tc.header {
			h[k] = v
		}
		r := e.request(ctx, body, h)
		if r.status != tc.status || r.errCode != -32600 || !strings.Contains(r.errMsg, tc.says) {
			t.Errorf("%v: HTTP %d %s", tc.header, r.status, r.body)
		}
	}
}
