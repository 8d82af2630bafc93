package modernface_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// Interop with real legacy upstreams: a go-sdk modern client →
// the bridge's modern face → the TypeScript SDK 1.32.2 legacy server and
// mcp-go v1.2.1's legacy server. The same client runs against the in-repo
// Go fixture, which needs no Node.

func TestInteropTypeScriptLegacyServer(t *testing.T) {
	srv := peers.StartTSServer(t, peers.TSServerOptions{PollMs: 50, TimeScale: 0.2})
	runLegacyUpstreamSuite(t, startBridge(t, srv.URL), true)
}

func TestInteropGoFixtureLegacyServer(t *testing.T) {
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.2, PollInterval: 50 * time.Millisecond})
	url, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	bridge := startBridge(t, url)
	runLegacyUpstreamSuite(t, bridge, true)

	// go-sdk's own MRTR middleware answers the rounds the bridge makes of
	// requests the legacy upstream sends mid-call (M-48, M-54).
	ctx := ctxT(t)
	m := connectModern(t, ctx, bridge)
	t.Run("sync tool that elicits is an MRTR round", func(t *testing.T) {
		res, task := m.callTool(t, ctx, "ask_sync", map[string]any{"question": "Who?"})
		if task != "" || res == nil || len(res.Content) == 0 {
			t.Fatalf("ask_sync: task %q result %+v", task, res)
		}
		b, _ := json.Marshal(res.Content[0])
		if !strings.Contains(string(b), "accept: Alice") {
			t.Fatalf("ask_sync result %s does not carry the MRTR answer", b)
		}
	})
	t.Run("MRTR round then task (tasks-mrtr-composition)", func(t *testing.T) {
		_, id := m.callTool(t, ctx, "test_tool_with_task", map[string]any{})
		if id == "" {
			t.Fatal("no task after the MRTR round")
		}
		d := m.waitFor(t, ctx, id, isTerminal)
		if d.Status != "completed" || !strings.Contains(resultText(t, d.Result), "Hello, Alice!") {
			t.Fatalf("final %s: %s", d.Status, d.Result)
		}
	})
}

// runLegacyUpstreamSuite drives the legacy fixture tools (interop/README.md,
// Tools).
func runLegacyUpstreamSuite(t *testing.T, bridge string, inputs bool) {
	ctx := ctxT(t)
	m := connectModern(t, ctx, bridge)

	t.Run("sync", func(t *testing.T) {
		res, task := m.callTool(t, ctx, "echo", map[string]any{"text": "hi"})
		if task != "" || res == nil || len(res.Content) == 0 {
			t.Fatalf("echo: task %q result %+v", task, res)
		}
	})
	t.Run("task completes with inline result (M-55)", func(t *testing.T) {
		_, id := m.callTool(t, ctx, "slow_task", map[string]any{"ms": 300, "text": "raw"})
		if id == "" {
			t.Fatal("slow_task gave no task to a declaring client")
		}
		d := m.waitFor(t, ctx, id, isTerminal)
		if d.Status != "completed" || !strings.Contains(resultText(t, d.Result), "raw") {
			t.Fatalf("final %s: %s", d.Status, d.Result)
		}
		if strings.Contains(string(d.Result), "related-task") {
			t.Fatalf("inline result keeps legacy related-task _meta: %s", d.Result)
		}
	})
	t.Run("isError result is completed (M-56)", func(t *testing.T) {
		_, id := m.callTool(t, ctx, "fail_task", map[string]any{"ms": 100, "reason": "boom"})
		d := m.waitFor(t, ctx, id, isTerminal)
		var r struct {
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(d.Result, &r)
		if d.Status != "completed" || !r.IsError || d.Error != nil {
			t.Fatalf("fail_task: status %s result %s error %v; want completed + isError", d.Status, d.Result, d.Error)
		}
	})
	t.Run("JSON-RPC error is failed (M-56)", func(t *testing.T) {
		_, id := m.callTool(t, ctx, "protocol_error_job", map[string]any{})
		d := m.waitFor(t, ctx, id, isTerminal)
		if d.Status != "failed" || d.Error == nil || d.Error.Code != -32603 || d.Result != nil {
			t.Fatalf("protocol_error_job: %s %v %s", d.Status, d.Error, d.Result)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		_, id := m.callTool(t, ctx, "slow_task", map[string]any{"ms": 600000})
		m.cancel(t, ctx, id)
		if d := m.waitFor(t, ctx, id, isTerminal); d.Status != "cancelled" {
			t.Fatalf("after tasks/cancel: %s", d.Status)
		}
		m.cancel(t, ctx, id) // a terminal task: the same acknowledgement (M-59)
	})
	if !inputs {
		return
	}
	t.Run("elicitation during tasks/result becomes inputRequests (M-57, M-58)", func(t *testing.T) {
		_, id := m.callTool(t, ctx, "elicit_task", map[string]any{"question": "Your name?"})
		d := m.waitFor(t, ctx, id, func(d *detailedTask) bool { return d.Status == "input_required" || isTerminal(d) })
		if d.Status != "input_required" || len(d.InputRequests) != 1 {
			t.Fatalf("elicit_task: %s with %d input requests", d.Status, len(d.InputRequests))
		}
		var key string
		for k, r := range d.InputRequests {
			key = k
			if r.Method != "elicitation/create" || !strings.Contains(string(r.Params), "Your name?") || strings.Contains(string(r.Params), "related-task") {
				t.Fatalf("input request %s %s", r.Method, r.Params)
			}
		}
		m.update(t, ctx, id, map[string]json.RawMessage{
			key:           json.RawMessage(`{"action":"accept","content":{"answer":"Luca"}}`),
			"unknown-key": json.RawMessage(`{"action":"decline"}`), // ignored (M-58)
		})
		again := m.get(t, ctx, id)
		if _, still := again.InputRequests[key]; still {
			t.Fatalf("answered key %s is still outstanding", key)
		}
		d = m.waitFor(t, ctx, id, isTerminal)
		if d.Status != "completed" || !strings.Contains(resultText(t, d.Result), "Luca") {
			t.Fatalf("elicit_task final %s: %s", d.Status, d.Result)
		}
	})
	t.Run("sampling during tasks/result", func(t *testing.T) {
		_, id := m.callTool(t, ctx, "sample_task", map[string]any{"prompt": "Say hi"})
		d := m.waitFor(t, ctx, id, func(d *detailedTask) bool { return d.Status == "input_required" || isTerminal(d) })
		if d.Status != "input_required" {
			t.Fatalf("sample_task: %s", d.Status)
		}
		answers := map[string]json.RawMessage{}
		for k, r := range d.InputRequests {
			if r.Method != "sampling/createMessage" {
				t.Fatalf("input request %s", r.Method)
			}
			answers[k] = json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sampled hi"},"model":"test-model"}`)
		}
		m.update(t, ctx, id, answers)
		d = m.waitFor(t, ctx, id, isTerminal)
		if d.Status != "completed" || !strings.Contains(resultText(t, d.Result), "sampled hi") {
			t.Fatalf("sample_task final %s: %s", d.Status, d.Result)
		}
	})
	t.Run("two inputs answered one at a time", func(t *testing.T) {
		_, id := m.callTool(t, ctx, "multi_input", map[string]any{})
		d := m.waitFor(t, ctx, id, func(d *detailedTask) bool { return len(d.InputRequests) == 2 || isTerminal(d) })
		if len(d.InputRequests) != 2 {
			t.Fatalf("multi_input: %s with %d requests", d.Status, len(d.InputRequests))
		}
		var keys []string
		for k := range d.InputRequests {
			keys = append(keys, k)
		}
		m.update(t, ctx, id, map[string]json.RawMessage{keys[0]: json.RawMessage(`{"action":"accept","content":{"name":"n","confirm":true}}`)})
		mid := m.get(t, ctx, id)
		if mid.Status != "input_required" || len(mid.InputRequests) != 1 || mid.InputRequests[keys[1]].Method == "" {
			t.Fatalf("after a partial update: %s %v", mid.Status, mid.InputRequests)
		}
		m.update(t, ctx, id, map[string]json.RawMessage{keys[1]: json.RawMessage(`{"action":"accept","content":{"name":"n","confirm":true}}`)})
		if d := m.waitFor(t, ctx, id, isTerminal); d.Status != "completed" {
			t.Fatalf("multi_input final %s", d.Status)
		}
	})
}

func TestInteropMCPGoLegacyServer(t *testing.T) {
	srv := peers.StartMCPGoServer(t, peers.MCPGoServerOptions{TimeScale: 0.2})
	bridge := startBridge(t, srv.URL)
	ctx := ctxT(t)
	m := connectModern(t, ctx, bridge)

	if res, task := m.callTool(t, ctx, "echo", map[string]any{"text": "hi"}); task != "" || res == nil {
		t.Fatalf("echo: task %q", task)
	}
	for _, tool := range []string{"slow_task", "slow_required"} {
		_, id := m.callTool(t, ctx, tool, map[string]any{"ms": 200, "text": "mcpgo"})
		if id == "" {
			t.Fatalf("%s gave no task", tool)
		}
		d := m.waitFor(t, ctx, id, isTerminal)
		if d.Status != "completed" || !strings.Contains(resultText(t, d.Result), "mcpgo") {
			t.Fatalf("%s final %s: %s", tool, d.Status, d.Result)
		}
	}
	// mcp-go ends a failing task with a JSON-RPC -32603 on tasks/result:
	// failed with that error (M-56).
	_, id := m.callTool(t, ctx, "fail_task", map[string]any{"ms": 100, "reason": "mcpgo boom"})
	d := m.waitFor(t, ctx, id, isTerminal)
	if d.Status != "failed" || d.Error == nil || !strings.Contains(d.Error.Message, "mcpgo boom") {
		t.Fatalf("fail_task final %s %v", d.Status, d.Error)
	}
	_, id = m.callTool(t, ctx, "slow_required", map[string]any{"ms": 600000})
	m.cancel(t, ctx, id)
	if d := m.waitFor(t, ctx, id, isTerminal); d.Status != "cancelled" {
		t.Fatalf("after tasks/cancel: %s", d.Status)
	}
}
