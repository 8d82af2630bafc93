package modernface_test

// Conformance rows of docs/CONFORMANCE.md that no other test of the modern
// face pinned down on its own: each test names the checklist ids
// (M-xx, docs/CONFORMANCE.md) it proves and fails when the face breaks them.

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/tasksbridge/tasksbridge/rpc"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/modern"
)

// M-43 (SHOULD): responses carry X-Accel-Buffering: no, so reverse proxies
// do not buffer SSE; a plain request is answered with JSON and a listen
// with SSE (requests are answered with JSON or SSE).
func TestResponseHeaders_M43(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": withMeta(nil, withTasks)})
	h, err := modern.RequestHeaders(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("tools/list: HTTP %d, X-Accel-Buffering %q, want 200 and \"no\"", resp.StatusCode, resp.Header.Get("X-Accel-Buffering"))
	}
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("tools/list answered with Content-Type %q", ct)
	}
	id := createTask(t, e, ctx, "slow_compute", map[string]any{"seconds": 600})
	lr, _ := e.listen(ctx, []string{id}, withTasks)
	if lr.Header.Get("X-Accel-Buffering") != "no" || !strings.HasPrefix(lr.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("listen: X-Accel-Buffering %q, Content-Type %q", lr.Header.Get("X-Accel-Buffering"), lr.Header.Get("Content-Type"))
	}
}

// M-48: the face asks a modern client only for input its request declared
// a capability for. ask_sync elicits mid-call: with elicitation declared it
// becomes an MRTR round; without, the client gets an error naming the
// missing capability (-32021 on HTTP 400, M-39), never an inputRequests
// entry it cannot answer.
func TestInputOnlyForDeclaredCapabilities_M48(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	args := map[string]any{"name": "ask_sync", "arguments": map[string]any{"question": "Your name?"}}
	with := e.rpc(ctx, "tools/call", args, withTasks)
	if with.result == nil || with.result["resultType"] != "input_required" {
		t.Fatalf("with elicitation declared: %s, want an InputRequiredResult", with.body)
	}
	without := e.rpc(ctx, "tools/call", map[string]any{"name": "ask_sync", "arguments": map[string]any{"question": "Your name?"}}, clientCaps{tasks: true})
	// M-39: -32021 with data.requiredCapabilities naming elicitation, HTTP 400.
	if without.result != nil || without.errCode != rpc.CodeMissingRequiredClientCapability || !strings.Contains(without.errMsg, "elicitation") {
		t.Fatalf("without elicitation declared: HTTP %d %s, want -32021 naming elicitation", without.status, without.body)
	}
	if without.status != http.StatusBadRequest {
		t.Errorf("without elicitation declared: HTTP %d, want 400 (M-39)", without.status)
	}
	if !bytes.Contains(without.body, []byte(`"requiredCapabilities":{"elicitation":{"form":{}}}`)) {
		t.Errorf("without elicitation declared: %s lacks data.requiredCapabilities.elicitation.form", without.body)
	}
	if bytes.Contains(without.body, []byte("inputRequests")) {
		t.Errorf("an input request reached a client that cannot answer it: %s", without.body)
	}
}

// chattyLegacyServer is a minimal 2025-11-25 Streamable HTTP server, written
// by hand because go-sdk's server sends notifications/message only after a
// logging/setLevel: its one tool, chatty, answers on an SSE stream with a
// log message, a progress notification for the request's token, then the
// result.
func chattyLegacyServer(t *testing.T) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.ID == nil {
			w.WriteHeader(http.StatusAccepted) // notifications (and anything unreadable)
			return
		}
		reply := func(result string) string {
			return `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`
		}
		w.Header().Set("Mcp-Session-Id", "chatty-session")
		switch req.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"chatty","version":"1"}}`))
		case "tools/list":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, reply(`{"tools":[{"name":"chatty","inputSchema":{"type":"object"}}]}`))
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			tok := req.Params.Meta.ProgressToken
			if tok == nil {
				tok = json.RawMessage(`0`)
			}
			for _, m := range []string{
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"chatty log line"}}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(tok) + `,"progress":1}}`,
				reply(`{"content":[{"type":"text","text":"done"}]}`),
			} {
				_, _ = io.WriteString(w, "data: "+m+"\n\n")
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// M-46: a modern request without io.modelcontextprotocol/logLevel gets no
// notifications/message, even when the legacy upstream logs during the
// call; the progress of the same call is relayed with the client's token.
func TestNoLogMessagesWithoutLogLevel_M46(t *testing.T) {
	e := newEnvAt(t, chattyLegacyServer(t))
	ctx := ctxT(t)
	r := e.rpc(ctx, "tools/call", map[string]any{"name": "chatty", "arguments": map[string]any{},
		"_meta": map[string]any{"progressToken": "p-46"}}, withTasks)
	if r.result == nil || !strings.Contains(string(r.body), `"done"`) {
		t.Fatalf("tools/call chatty: HTTP %d %s", r.status, r.body)
	}
	var progress int
	for _, n := range r.notifications {
		switch {
		case bytes.Contains(n, []byte(`"notifications/message"`)):
			t.Errorf("notifications/message sent for a request without a logLevel: %s", n)
		case bytes.Contains(n, []byte(`"notifications/progress"`)) && bytes.Contains(n, []byte(`"p-46"`)):
			progress++
		}
	}
	if progress != 1 {
		t.Errorf("%d progress notifications with the client's token, want 1 (the stream was relayed): %s", progress, r.notifications)
	}
}

// M-39 on tasks/get: a task's inputRequests go only to a request that
// declared the capability they need. A client that declares only roots (and
// the extension) gets -32021 with data.requiredCapabilities naming form
// elicitation on HTTP 400 — never status input_required with an
// elicitation/create it cannot answer; the same poll with elicitation
// declared sees the request.
func TestTasksGetInputOnlyForDeclaredCapabilities_M39(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	id := createTask(t, e, ctx, "elicit_task", map[string]any{"question": "Your name?"})
	d := e.pollUntil(ctx, id, withTasks, statusIs("input_required"))
	if d["status"] != "input_required" {
		t.Fatalf("elicit_task: %v, want input_required", d)
	}
	rootsOnly := clientCaps{tasks: true, roots: true}
	r := e.rpc(ctx, "tasks/get", map[string]any{"taskId": id}, rootsOnly)
	if r.result != nil || r.errCode != rpc.CodeMissingRequiredClientCapability {
		t.Fatalf("tasks/get declaring only roots: HTTP %d %s, want -32021", r.status, r.body)
	}
	if r.status != http.StatusBadRequest {
		t.Errorf("tasks/get declaring only roots: HTTP %d, want 400 (M-39)", r.status)
	}
	if !bytes.Contains(r.errData, []byte(`"requiredCapabilities":{"elicitation":{"form":{}}}`)) || !strings.Contains(r.errMsg, "elicitation") {
		t.Errorf("tasks/get declaring only roots: %s lacks data.requiredCapabilities.elicitation.form", r.body)
	}
	if bytes.Contains(r.body, []byte("elicitation/create")) {
		t.Errorf("tasks/get declaring only roots leaked the input request: %s", r.body)
	}
	// The refusal changes nothing: a declaring poll still sees the request.
	again := e.rpc(ctx, "tasks/get", map[string]any{"taskId": id}, withTasks).ok(t)
	if again["status"] != "input_required" || again["inputRequests"] == nil {
		t.Fatalf("tasks/get with elicitation declared after the refusal: %v", again)
	}
}

// M-39 on a task listen: a listen that declared no elicitation is never sent
// the task's elicitation/create — the input_required notification is
// withheld — and still sees the task complete once a declaring client
// answers.
func TestListenInputOnlyForDeclaredCapabilities_M39(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	id := createTask(t, e, ctx, "confirm_delete", map[string]any{"filename": "m39.txt"})
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, ch := e.listen(lctx, []string{id}, clientCaps{tasks: true, roots: true})
	if ack := next(t, ctx, ch); ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %v, want the acknowledgement", ack)
	}
	d := e.pollUntil(ctx, id, withTasks, statusIs("input_required"))
	var key string
	for k := range d["inputRequests"].(map[string]any) {
		key = k
	}
	e.rpc(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}, withTasks).ok(t)
	for {
		n := next(t, ctx, ch)
		b, _ := json.Marshal(n)
		if bytes.Contains(b, []byte("elicitation/create")) || bytes.Contains(b, []byte(`"input_required"`)) {
			t.Fatalf("a listener without elicitation was sent the input request: %s", b)
		}
		if params, _ := n["params"].(map[string]any); params["status"] == "completed" {
			return
		}
	}
}
