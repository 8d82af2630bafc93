package modernup

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// M-01, M-36, M-49: discover answers with the version and the extension.
func TestDiscover(t *testing.T) {
	env := startDemo(t, demo.Options{})
	d, err := env.client.Discover(ctxT(t), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.SupportsVersion(modern.ProtocolVersion) || !d.Capabilities.HasTasksExtension() {
		t.Fatalf("discover = %+v", d)
	}
	if got := len(env.rec.byMethod(modern.MethodDiscover)); got != 1 {
		t.Fatalf("discover requests = %d", got)
	}
}

// M-21: a synchronous tool answers complete.
func TestCallToolComplete(t *testing.T) {
	env := startDemo(t, demo.Options{})
	out, err := env.client.CallTool(ctxT(t), tool("echo", map[string]any{"text": "héllo"}), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Type != modern.ResultComplete || out.Task != nil || !strings.Contains(string(out.Raw), "héllo") {
		t.Fatalf("echo = %s %s", out.Type, out.Raw)
	}
}

// slow_task → task → tasks/get working → completed with the result (M-21, M-32).
func TestSlowTaskLifecycle(t *testing.T) {
	env := startDemo(t, demo.Options{})
	c := env.client
	id := createTask(t, c, "slow_task", map[string]any{"ms": 60_000, "text": "done!"}, CallOptions{})
	if len(id) < 32 {
		t.Errorf("upstream task id %q looks guessable", id)
	}
	d, err := c.GetTask(ctxT(t), id, CallOptions{})
	if err != nil || d.Status != modern.StatusWorking {
		t.Fatalf("tasks/get = %+v, %v", d, err)
	}
	if !env.srv.CompleteNow(id) {
		t.Fatal("demo had no pending end")
	}
	d, err = c.GetTask(ctxT(t), id, CallOptions{})
	if err != nil || d.Status != modern.StatusCompleted || !strings.Contains(string(d.Result), "done!") || d.ResultIsError() {
		t.Fatalf("tasks/get = %+v %s, %v", d, d.Result, err)
	}
	if env.srv.GetCount(id) != 2 {
		t.Fatalf("demo counted %d tasks/get", env.srv.GetCount(id))
	}
}

// fail_task → failed with the inline JSON-RPC error; error_task → completed
// with isError (M-56).
func TestFailedAndIsError(t *testing.T) {
	env := startDemo(t, demo.Options{})
	c := env.client
	id := createTask(t, c, "fail_task", map[string]any{"reason": "boom", "ms": 60_000}, CallOptions{})
	env.srv.CompleteNow(id)
	d, err := c.GetTask(ctxT(t), id, CallOptions{})
	if err != nil || d.Status != modern.StatusFailed || d.Error == nil || d.Error.Code != rpc.CodeInternalError || d.Error.Message != "boom" {
		t.Fatalf("failed task = %+v (error %+v), %v", d, d.Error, err)
	}
	id = createTask(t, c, "error_task", map[string]any{"reason": "bad input", "ms": 60_000}, CallOptions{})
	env.srv.CompleteNow(id)
	d, err = c.GetTask(ctxT(t), id, CallOptions{})
	if err != nil || d.Status != modern.StatusCompleted || !d.ResultIsError() {
		t.Fatalf("isError task = %+v, %v", d, err)
	}
}

// elicit_task: the caller's elicitation capability reaches the upstream
// (M-01); input_required → tasks/update under the same key → completed (M-28).
func TestElicitTaskInputRequiredUpdate(t *testing.T) {
	env := startDemo(t, demo.Options{})
	c := env.client
	opts := CallOptions{Capabilities: elicitCaps(), LogLevel: modern.LogInfo}

	// Without the capability the upstream refuses (-32021, unchanged).
	_, err := c.CallTool(ctxT(t), tool("elicit_task", map[string]any{"question": "name?"}), CallOptions{})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != rpc.CodeMissingRequiredClientCapability {
		t.Fatalf("elicit_task without elicitation = %v, want -32021", err)
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrBadResponse) {
		t.Fatal("an upstream JSON-RPC error was classified as a transport failure")
	}

	id := createTask(t, c, "elicit_task", map[string]any{"question": "name?"}, opts)
	d, err := c.GetTask(ctxT(t), id, opts)
	if err != nil || d.Status != modern.StatusInputRequired || len(d.InputRequests) != 1 {
		t.Fatalf("tasks/get = %+v, %v", d, err)
	}
	k := d.InputRequests.Keys()[0]
	if d.InputRequests[k].Kind() != modern.InputElicitation {
		t.Fatalf("input request %s kind %v", k, d.InputRequests[k].Kind())
	}
	if err := c.UpdateTask(ctxT(t), id, modern.InputResponses{k: json.RawMessage(`{"action":"accept","content":{"answer":"Luca"}}`)}, opts); err != nil {
		t.Fatal(err)
	}
	d, err = c.GetTask(ctxT(t), id, opts)
	if err != nil || d.Status != modern.StatusCompleted || !strings.Contains(string(d.Result), "Luca") {
		t.Fatalf("after update = %+v %s, %v", d, d.Result, err)
	}
	if n := env.srv.Counters().InputResponses; n != 1 {
		t.Fatalf("demo accepted %d input responses", n)
	}
	if err := c.UpdateTask(ctxT(t), id, nil, opts); rpc.CodeOf(err) != rpc.CodeInvalidParams {
		t.Fatalf("empty update = %v", err)
	}
}

// tasks/cancel is acknowledged; the demo then reports cancelled.
func TestCancelTask(t *testing.T) {
	env := startDemo(t, demo.Options{})
	c := env.client
	id := createTask(t, c, "slow_task", map[string]any{"ms": 60_000, "text": "x"}, CallOptions{})
	if err := c.CancelTask(ctxT(t), id, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := c.GetTask(ctxT(t), id, CallOptions{})
	if err != nil || d.Status != modern.StatusCancelled {
		t.Fatalf("after cancel = %+v, %v", d, err)
	}
}

// M-27: an unknown task is the upstream's -32602, returned unchanged.
func TestUnknownTaskIsInvalidParams(t *testing.T) {
	env := startDemo(t, demo.Options{})
	_, err := env.client.GetTask(ctxT(t), "no-such-task", CallOptions{})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != rpc.CodeInvalidParams {
		t.Fatalf("unknown task = %v, want -32602", err)
	}
	var ue *Error
	if errors.As(err, &ue) {
		t.Fatal("upstream error wrapped as a transport *Error")
	}
}

// The legacy client's Authorization reaches the upstream, which binds tasks
// to it: another principal cannot read the task (M-65).
func TestAuthorizationForwarded(t *testing.T) {
	env := startDemo(t, demo.Options{})
	c := env.client
	alice := CallOptions{Authorization: "Bearer alice"}
	id := createTask(t, c, "slow_task", map[string]any{"ms": 60_000, "text": "x"}, alice)
	if _, err := c.GetTask(ctxT(t), id, alice); err != nil {
		t.Fatalf("owner: %v", err)
	}
	if _, err := c.GetTask(ctxT(t), id, CallOptions{Authorization: "Bearer bob"}); rpc.CodeOf(err) != rpc.CodeInvalidParams {
		t.Fatalf("other principal: %v, want -32602", err)
	}
	for _, q := range env.rec.byMethod(modern.MethodTasksGet) {
		if q.Header.Get("Authorization") == "" {
			t.Error("tasks/get without Authorization")
		}
	}
}

// M-10: an Mcp-Name that is not plain ASCII is base64-wrapped; the strict demo
// accepts it (it answers "unknown tool", not -32020).
func TestMcpNameBase64(t *testing.T) {
	env := startDemo(t, demo.Options{})
	_, err := env.client.CallTool(ctxT(t), tool("wérk ", nil), CallOptions{})
	if c := rpc.CodeOf(err); c == rpc.CodeHeaderMismatch || err == nil {
		t.Fatalf("non-ASCII tool name: %v", err)
	}
	q := env.rec.byMethod(modern.MethodToolsCall)
	if len(q) != 1 || !strings.HasPrefix(q[0].Header.Get("Mcp-Name"), "=?base64?") {
		t.Fatalf("Mcp-Name = %q", q[0].Header.Get("Mcp-Name"))
	}
}

func TestHeaderValueEncoding(t *testing.T) {
	for in, wrap := range map[string]bool{
		"plain-id_123":        false,
		"with inner space":    false,
		" lead":               true,
		"trail\t":             true,
		"héllo":               true,
		"line\nbreak":         true,
		"=?base64?aGk=?=":     true, // looks like the sentinel (M-10)
		"=?base64?not-closed": false,
		"":                    false,
	} {
		enc := encodeHeaderValue(in)
		if got := enc != in; got != wrap {
			t.Errorf("encode(%q) = %q, wrapped %v want %v", in, enc, got, wrap)
		}
		if dec, err := decodeHeaderValue(enc); err != nil || (wrap && dec != in) {
			t.Errorf("round trip %q → %q → %q, %v", in, enc, dec, err)
		}
	}
}

// Upstream down → -32603 naming the upstream, retryable.
func TestUnreachableUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nothing listens there now
	c := NewHTTP(url, nil)
	_, err = c.GetTask(ctxT(t), "T", CallOptions{})
	if !errors.Is(err, ErrUnavailable) || !Retryable(err) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	e := rpc.As(err)
	if e.Code != rpc.CodeInternalError || !strings.Contains(e.Message, url) || !strings.Contains(e.Message, "unreachable") {
		t.Fatalf("rpc error = %+v, want -32603 naming %s", e, url)
	}
	if _, err := c.ProbeEra(ctxT(t)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("probe of a dead upstream = %v", err)
	}
}

// 5xx/429 are unavailable; a 4xx without a JSON-RPC body is a bad response.
func TestHTTPStatusClassification(t *testing.T) {
	for _, tc := range []struct {
		status   int
		body     string
		kind     error
		contains string
	}{
		{503, "overloaded", ErrUnavailable, "503"},
		{500, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"db down"}}`, ErrUnavailable, "db down"},
		{429, "", ErrUnavailable, "429"},
		{404, "not found", ErrBadResponse, "404"},
		{405, "", ErrBadResponse, "405"},
	} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		c := NewHTTP(hs.URL, nil)
		_, err := c.Call(ctxT(t), modern.MethodToolsList, nil, CallOptions{})
		hs.Close()
		if !errors.Is(err, tc.kind) || rpc.CodeOf(err) != rpc.CodeInternalError || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("HTTP %d: err = %v, want %v containing %q", tc.status, err, tc.kind, tc.contains)
		}
	}
}

// A 4xx with a JSON-RPC body is the upstream's answer, returned unchanged.
func TestHTTP400JSONRPCErrorUnchanged(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"need it","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`))
	}))
	defer hs.Close()
	_, err := NewHTTP(hs.URL, nil).Call(ctxT(t), modern.MethodToolsCall, tool("x", nil), CallOptions{})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != rpc.CodeMissingRequiredClientCapability || string(we.Data) == "" {
		t.Fatalf("err = %v", err)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Fatal("classified as unavailable")
	}
}

// M-04, M-22: an unknown resultType, or "task" for a method that cannot
// create tasks, is an invalid response.
func TestInvalidResultType(t *testing.T) {
	for method, result := range map[string]string{
		modern.MethodToolsCall:  `{"resultType":"weird"}`,
		modern.MethodToolsList:  `{"resultType":"task","taskId":"t","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null}`,
		modern.MethodPromptsGet: `{"resultType":"task"}`,
	} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			req, _ := decodeReq(readAll(r))
			w.Header().Set("Content-Type", "application/json")
			b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(result)})
			_, _ = w.Write(b)
		}))
		_, err := NewHTTP(hs.URL, nil).Call(ctxT(t), method, json.RawMessage(`{"name":"x"}`), CallOptions{})
		hs.Close()
		if !errors.Is(err, ErrBadResponse) || rpc.CodeOf(err) != rpc.CodeInternalError {
			t.Errorf("%s → %s: err = %v, want ErrBadResponse", method, result, err)
		}
	}
}

// M-03: concurrent requests get distinct ids.
func TestRequestIDsUnique(t *testing.T) {
	env := startDemo(t, demo.Options{})
	done := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func() {
			_, err := env.client.CallTool(context.Background(), tool("echo", map[string]any{"text": "x"}), CallOptions{})
			done <- err
		}()
	}
	for i := 0; i < 20; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	seen := map[any]bool{}
	for _, q := range env.rec.all() {
		req, _ := decodeReq(q.Body)
		if seen[req.ID.Raw()] {
			t.Fatalf("id %v reused", req.ID.Raw())
		}
		seen[req.ID.Raw()] = true
	}
}
