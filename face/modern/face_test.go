package modernface_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/modern"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

func createTask(t *testing.T, e *env, ctx context.Context, tool string, args map[string]any) string {
	t.Helper()
	r := e.rpc(ctx, "tools/call", map[string]any{"name": tool, "arguments": args}, withTasks)
	id, _ := r.ok(t)["taskId"].(string)
	if id == "" || r.result["resultType"] != "task" {
		t.Fatalf("%s gave no task: %s", tool, r.body)
	}
	return id
}

// The upstream session dies (404: an upstream restart, an expired session):
// the task reports failed with an error that says why, never a hang.
func TestDeadUpstreamSessionFailsTheTask(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	id := createTask(t, e, ctx, "slow_compute", map[string]any{"seconds": 600})
	e.fx.DropSessions()
	d := e.pollUntil(ctx, id, withTasks, terminal)
	b, _ := json.Marshal(d)
	schemacheck.Load(t).Check(t, schemacheck.Ext, "GetTaskResult", b)
	errObj, _ := d["error"].(map[string]any)
	msg, _ := errObj["message"].(string)
	if d["status"] != "failed" || errObj["code"] != float64(-32603) || !strings.Contains(msg, "404") || !strings.Contains(msg, "session") {
		t.Fatalf("after the upstream session died: %s", b)
	}
	// It sticks, and later calls go to a fresh upstream session.
	again := e.rpc(ctx, "tasks/get", map[string]any{"taskId": id}, withTasks).ok(t)
	if again["status"] != "failed" {
		t.Fatalf("failed did not stick: %v", again)
	}
	if r := e.rpc(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "x"}}, withTasks); r.result == nil {
		t.Fatalf("no fresh upstream session: %s", r.body)
	}
}

// A bridge restart (same store, new process state): tasks/get of a task
// created before resumes the recorded HTTP upstream session by id.
func TestRestartResumesUpstreamSessionByID(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	id := createTask(t, e, ctx, "slow_compute", map[string]any{"seconds": 10})

	pool2, err := legacyup.NewPool(legacyup.Config{Endpoint: e.pool.Target(), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool2.Close() })
	f2, err := modernface.New(modernface.Options{Upstream: pool2, Store: e.store, Logger: quietLogger(), PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(f2)
	t.Cleanup(func() { srv2.CloseClientConnections(); srv2.Close(); f2.Close() })
	e2 := &env{t: t, fx: e.fx, pool: pool2, store: e.store, face: f2, url: srv2.URL}
	d := e2.pollUntil(ctx, id, withTasks, terminal)
	if d["status"] != "completed" || d["result"] == nil {
		t.Fatalf("after restart: %v", d)
	}
	if n := e.fx.Stats().TasksCreated; n != 1 {
		t.Fatalf("upstream saw %d tasks, want the one", n)
	}
}

// readSSE streams the JSON messages of an SSE response.
func readSSE(body interface{ Read([]byte) (int, error) }) <-chan json.RawMessage {
	ch := make(chan json.RawMessage, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(d) != "" {
				ch <- json.RawMessage(strings.TrimSpace(d))
			}
		}
	}()
	return ch
}

func (e *env) listen(ctx context.Context, taskIDs []string, caps clientCaps) (*http.Response, <-chan json.RawMessage) {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
		"params": withMeta(map[string]any{"notifications": map[string]any{"taskIds": taskIDs}}, caps)})
	h, _ := modern.RequestHeaders(body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	return resp, readSSE(resp.Body)
}

func next(t *testing.T, ctx context.Context, ch <-chan json.RawMessage) map[string]any {
	t.Helper()
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatal("the listen stream ended")
		}
		var v map[string]any
		if err := json.Unmarshal(m, &v); err != nil {
			t.Fatal(err)
		}
		return v
	case <-ctx.Done():
		t.Fatal("no notification")
	}
	return nil
}

// subscriptions/listen with taskIds: the acknowledgement names only the
// caller's tasks, then notifications/tasks carry the full DetailedTask, with
// the subscriptionId, through input_required to completion (M-47, M-63).
func TestListenTaskNotifications(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	v := schemacheck.Load(t)
	id := createTask(t, e, ctx, "confirm_delete", map[string]any{"filename": "l.txt"})
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, ch := e.listen(lctx, []string{id, "someone-elses-task"}, withTasks)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("listen: HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ack := next(t, ctx, ch)
	if ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %v, want the acknowledgement", ack)
	}
	b, _ := json.Marshal(ack["params"])
	if !strings.Contains(string(b), id) || strings.Contains(string(b), "someone-elses-task") || !strings.Contains(string(b), "listen-1") {
		t.Fatalf("acknowledgement %s", b)
	}
	var key string
	for key == "" {
		n := next(t, ctx, ch)
		p, _ := json.Marshal(n["params"])
		v.Check(t, schemacheck.Ext, "TaskStatusNotificationParams", p)
		if n["method"] != "notifications/tasks" || !strings.Contains(string(p), `"io.modelcontextprotocol/subscriptionId":"listen-1"`) {
			t.Fatalf("notification %s %s", n["method"], p)
		}
		params := n["params"].(map[string]any)
		if reqs, ok := params["inputRequests"].(map[string]any); ok {
			for k := range reqs {
				key = k
			}
		}
	}
	r := e.rpc(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}, withTasks)
	r.ok(t)
	for {
		n := next(t, ctx, ch)
		params, _ := n["params"].(map[string]any)
		if params["status"] == "completed" {
			if params["result"] == nil {
				t.Fatalf("completed notification without result: %v", params)
			}
			break
		}
	}
}

func TestListenNeedsTheExtension(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
		"params": withMeta(map[string]any{"notifications": map[string]any{"taskIds": []string{"x"}}}, withoutTasks)})
	r := e.request(ctx, body, nil)
	if r.status != 400 || r.errCode != -32021 {
		t.Fatalf("listen for taskIds without the extension: HTTP %d %s (M-61)", r.status, r.body)
	}
}

func TestHTTPFront(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	get, err := http.Get(e.url)
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405 (M-43)", get.StatusCode)
	}
	r := e.request(ctx, []byte(`{"jsonrpc":"2.0","method":"tools/list"}`), map[string]string{"Origin": "https://evil.example"})
	if r.status != http.StatusForbidden {
		t.Errorf("foreign Origin: %d, want 403 (M-43)", r.status)
	}
	big := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`), bytes.Repeat([]byte("a"), modernface.MaxBody)...)
	big = append(big, `"}}`...)
	if r := e.request(ctx, big, nil); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", r.status)
	}
	if r := e.request(ctx, []byte(`{"jsonrpc":"2.0","id":5,"result":{}}`), nil); r.status != 400 || r.errCode != -32600 {
		t.Errorf("a posted response: HTTP %d %s", r.status, r.body)
	}
	if r := e.request(ctx, []byte(`{not json`), nil); r.status != 400 || r.errCode != -32700 {
		t.Errorf("garbage: HTTP %d %s", r.status, r.body)
	}
	note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": withMeta(map[string]any{"requestId": 1}, withTasks)})
	if r := e.request(ctx, note, nil); r.status != http.StatusAccepted {
		t.Errorf("notification: %d, want 202 (M-43)", r.status)
	}
}

func TestRequireAuth(t *testing.T) {
	e := newEnv(t, envOpts{face: func(o *modernface.Options) { o.RequireAuth = true }})
	ctx := ctxT(t)
	if r := e.rpc(ctx, "tools/list", nil, withTasks); r.status != http.StatusUnauthorized {
		t.Fatalf("no credentials: HTTP %d, want 401", r.status)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": withMeta(nil, withTasks)})
	if r := e.request(ctx, body, map[string]string{"Authorization": "Bearer a"}); r.result == nil {
		t.Fatalf("with credentials: %s", r.body)
	}
}

// The stdio entry point: the same face over one connection, without
// headers; era and _meta gating and task listens included.
func TestStdio(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	ct, st := mcp.NewInMemoryTransports()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.face.Run(runCtx, st) }()
	defer func() { stop(); <-done }()
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	seq := 0
	send := func(method string, params map[string]any) jsonrpc.ID {
		seq++
		id, _ := jsonrpc.MakeID(float64(seq))
		b, _ := json.Marshal(params)
		if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: b}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	read := func() jsonrpc.Message {
		m, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	response := func(id jsonrpc.ID) *jsonrpc.Response {
		for {
			if r, ok := read().(*jsonrpc.Response); ok && r.ID == id {
				return r
			}
		}
	}
	if r := response(send("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})); rpcCode(r.Error) != -32022 {
		t.Fatalf("stdio initialize: %v, want -32022 (M-44)", r.Error)
	}
	if r := response(send("tools/list", map[string]any{})); rpcCode(r.Error) != -32602 {
		t.Fatalf("stdio request without _meta: %v, want -32602 (M-37)", r.Error)
	}
	if r := response(send("tasks/result", withMeta(map[string]any{"taskId": "x"}, withTasks))); rpcCode(r.Error) != -32601 {
		t.Fatalf("stdio tasks/result: %v, want -32601 (M-66)", r.Error)
	}
	r := response(send("tools/call", withMeta(map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 1}}, withTasks)))
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	var ct1 struct {
		ResultType, TaskID string
	}
	_ = json.Unmarshal(r.Result, &ct1)
	if ct1.ResultType != "task" || ct1.TaskID == "" {
		t.Fatalf("stdio tools/call: %s", r.Result)
	}
	if g := response(send("tasks/get", withMeta(map[string]any{"taskId": ct1.TaskID}, withTasks))); g.Error != nil || !strings.Contains(string(g.Result), ct1.TaskID) {
		t.Fatalf("stdio tasks/get: %v %s", g.Error, g.Result)
	}
	listenID := send("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"taskIds": []string{ct1.TaskID}}}, withTasks))
	sawAck := false
	for {
		m := read()
		n, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		if n.Method == "notifications/subscriptions/acknowledged" {
			sawAck = true
			continue
		}
		if n.Method == "notifications/tasks" {
			if !sawAck {
				t.Fatal("notification before the acknowledgement (M-47)")
			}
			if !strings.Contains(string(n.Params), `"io.modelcontextprotocol/subscriptionId":`+string(mustJSON(listenID.Raw()))) {
				t.Fatalf("stdio notification without the subscriptionId (M-14): %s", n.Params)
			}
			if strings.Contains(string(n.Params), `"status":"completed"`) {
				break
			}
		}
	}
	cancelParams, _ := json.Marshal(map[string]any{"requestId": listenID.Raw()})
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: cancelParams}); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// An unreachable upstream (down, not yet restarted) is not a verdict on the
// task: tasks/get answers at once with the recorded state and the watcher
// keeps trying; new work gets a -32603 naming the upstream.
func TestUnreachableUpstreamServesRecordedState(t *testing.T) {
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	url, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	e := newEnvAt(t, url)
	ctx := ctxT(t)
	id := createTask(t, e, ctx, "slow_compute", map[string]any{"seconds": 600})
	stop()
	start := time.Now()
	d := e.rpc(ctx, "tasks/get", map[string]any{"taskId": id}, withTasks).ok(t)
	if d["status"] != "working" || d["taskId"] != id {
		t.Fatalf("tasks/get with the upstream down: %v", d)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("tasks/get took %v with the upstream down", time.Since(start))
	}
	r := e.rpc(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "x"}}, withTasks)
	if r.errCode != -32603 || !strings.Contains(r.errMsg, url) {
		t.Fatalf("tools/call with the upstream down: %s", r.body)
	}
}
