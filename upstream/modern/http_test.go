package modernup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/interop/peers"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// M-33 over HTTP: the listen stream acknowledges the task, sends its current
// state, then its completion.
func TestHTTPListenTasks(t *testing.T) {
	env := startDemo(t, demo.Options{})
	c := env.client
	id := createTask(t, c, "slow_task", map[string]any{"ms": 60_000, "text": "fin"}, CallOptions{})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	ts, err := c.ListenTasks(ctx, []string{id}, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Acked) != 1 || ts.Acked[0] != id {
		t.Fatalf("acked %v", ts.Acked)
	}
	if d := <-ts.Tasks; d == nil || d.Status != modern.StatusWorking {
		t.Fatalf("first notification %+v", d)
	}
	env.srv.CompleteNow(id)
	d := <-ts.Tasks
	if d == nil || d.Status != modern.StatusCompleted || !strings.Contains(string(d.Result), "fin") {
		t.Fatalf("completion %+v", d)
	}
	cancel() // closes the POST stream (M-12)
	for range ts.Tasks {
	}
	if !errors.Is(ts.Err(), context.Canceled) {
		t.Fatalf("stream err %v", ts.Err())
	}
}

// With push disabled the upstream acknowledges none of the ids (M-15).
func TestHTTPListenNotAcknowledged(t *testing.T) {
	env := startDemo(t, demo.Options{DisablePush: true})
	id := createTask(t, env.client, "slow_task", map[string]any{"ms": 60_000, "text": "x"}, CallOptions{})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	ts, err := env.client.ListenTasks(ctx, []string{id}, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	if len(ts.Acked) != 0 {
		t.Fatalf("acked %v, want none", ts.Acked)
	}
}

// A server shutdown ends the listen gracefully (its result, M-47): Err is nil.
func TestHTTPListenGracefulEnd(t *testing.T) {
	env := startDemo(t, demo.Options{})
	id := createTask(t, env.client, "slow_task", map[string]any{"ms": 60_000, "text": "x"}, CallOptions{})
	ts, err := env.client.ListenTasks(ctxT(t), []string{id}, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-ts.Tasks
	env.srv.Close()
	for range ts.Tasks {
	}
	if err := ts.Err(); err != nil {
		t.Fatalf("graceful end: %v", err)
	}
}

// M-12 on HTTP: cancelling the ctx closes the POST; the server sees the
// disconnect and the call returns the context's error.
func TestHTTPCancelClosesStream(t *testing.T) {
	started := make(chan struct{})
	gone := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		close(gone)
	}))
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := NewHTTP(hs.URL, nil).Call(ctx, modern.MethodToolsCall, tool("long", nil), CallOptions{})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	<-gone // the server observed the disconnect
}

// M-13: a stream that ends without a response is re-issued with a new id
// (for methods without side effects); tools/call is not re-issued.
func TestHTTPBrokenStreamReissued(t *testing.T) {
	var calls atomic.Int32
	var mu sync.Mutex
	var ids []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := decodeReq(readAll(r))
		mu.Lock()
		ids = append(ids, fmt.Sprint(req.ID.Raw()))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if calls.Add(1) == 1 {
			w.WriteHeader(200) // stream ends with no response
			return
		}
		b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(
			`{"resultType":"complete","taskId":"T","status":"working","createdAt":"2026-08-01T12:00:00Z","lastUpdatedAt":"2026-08-01T12:00:00Z","ttlMs":null}`)})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}))
	defer hs.Close()
	c := NewHTTP(hs.URL, nil)
	d, err := c.GetTask(ctxT(t), "T", CallOptions{})
	if err != nil || d.Status != modern.StatusWorking {
		t.Fatalf("GetTask = %+v, %v", d, err)
	}
	mu.Lock()
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("request ids %v, want two distinct", ids)
	}
	mu.Unlock()

	calls.Store(0)
	_, err = c.CallTool(ctxT(t), tool("x", nil), CallOptions{})
	if !errors.Is(err, ErrUnavailable) || calls.Load() != 1 {
		t.Fatalf("tools/call on a broken stream: %v after %d requests, want ErrUnavailable after 1", err, calls.Load())
	}
}

// On HTTP, notifications on a call's own stream reach its OnNotify.
func TestHTTPNotificationsReachTheirCall(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := decodeReq(readAll(r))
		var p struct {
			Meta struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(req.Params, &p)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, m := range []jsonrpc.Message{
			&jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":` + string(p.Meta.Token) + `,"progress":1}`)},
			&jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"x"}`)},
			&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"resultType":"complete","content":[]}`)},
		} {
			b, _ := jsonrpc.EncodeMessage(m)
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
	}))
	defer hs.Close()
	var got []string // appended by the reader goroutine before the response is delivered
	params := json.RawMessage(`{"name":"x","_meta":{"progressToken":42}}`)
	_, err := NewHTTP(hs.URL, nil).Call(ctxT(t), modern.MethodToolsCall, params, CallOptions{
		LogLevel: modern.LogInfo,
		OnNotify: func(method string, p json.RawMessage) { got = append(got, method+" "+string(p)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !strings.Contains(got[0], `"progressToken":42`) || !strings.HasPrefix(got[1], "notifications/message") {
		t.Fatalf("notifications %q", got)
	}
}

// Per-call headers (M-11 Mcp-Param-*) are sent, unsafe values encoded;
// headers that mirror the body cannot be overridden.
func TestHTTPExtraHeaders(t *testing.T) {
	env := startDemo(t, demo.Options{})
	h := http.Header{}
	h.Set("Mcp-Param-Region", "zürich")
	h.Set("Mcp-Method", "evil")
	if _, err := env.client.CallTool(ctxT(t), tool("echo", map[string]any{"text": "x"}), CallOptions{Header: h}); err != nil {
		t.Fatal(err)
	}
	q := env.rec.byMethod(modern.MethodToolsCall)[0]
	if v, _ := decodeHeaderValue(q.Header.Get("Mcp-Param-Region")); v != "zürich" || !strings.HasPrefix(q.Header.Get("Mcp-Param-Region"), "=?base64?") {
		t.Fatalf("Mcp-Param-Region = %q", q.Header.Get("Mcp-Param-Region"))
	}
}

// ProbeEra (§3.4, M-06, M-07): modern on a DiscoverResult or a recognised
// modern error; legacy on anything else, never keyed on one code.
func TestProbeEra(t *testing.T) {
	env := startDemo(t, demo.Options{})
	if got, err := env.client.ProbeEra(ctxT(t)); err != nil || got != era.Modern {
		t.Fatalf("demo: %v, %v", got, err)
	}
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   era.Era
	}{
		{"plain 400", 400, "Bad Request: missing Mcp-Session-Id", era.Legacy},
		{"404 -32601", 404, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, era.Legacy},
		{"400 -32602", 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, era.Legacy},
		{"-32022 modern supported", 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}`, era.Modern},
		{"-32022 legacy only", 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`, era.Legacy},
		{"-32020", 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header"}}`, era.Modern},
		{"-32021", 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"cap","data":{"requiredCapabilities":{}}}}`, era.Modern},
		{"not a DiscoverResult", 200, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`, era.Legacy},
		// The tasks era decides (mcp-go v1.2.1): 2026-07-28 core with the
		// 2025-11-25 capabilities.tasks and no extension is served as legacy.
		{"modern core, legacy tasks", 200, discoverBody(`"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`), era.Legacy},
		{"modern core, tasks extension", 200, discoverBody(`"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}`), era.Modern},
		{"modern core, both", 200, discoverBody(`"tasks":{"list":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}`), era.Modern},
		{"modern core, no tasks", 200, discoverBody(`"tools":{}`), era.Modern},
	} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		got, err := NewHTTP(hs.URL, nil).ProbeEra(ctxT(t))
		hs.Close()
		if got != tc.want || err != nil {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// discoverBody is a DiscoverResult response naming 2026-07-28 with caps.
func discoverBody(caps string) string {
	return `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],` +
		`"capabilities":{` + caps + `},"ttlMs":0,"cacheScope":"private"}}`
}

// A real legacy-only go-sdk server (2025-11-25, stateful sessions) probes legacy.
func TestProbeEraGoSDKLegacyServer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1"},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	got, err := NewHTTP(hs.URL, nil).ProbeEra(ctxT(t))
	if err != nil || got != era.Legacy {
		t.Fatalf("go-sdk legacy server: %v, %v", got, err)
	}
}

// The rpc.Error of a transport failure carries the upstream's name but no
// go-sdk sentinel code.
func TestTransportErrorShape(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) }))
	defer hs.Close()
	_, err := NewHTTP(hs.URL, nil).Discover(ctxT(t), CallOptions{})
	var e *Error
	if !errors.As(err, &e) || e.RPC.Code != rpc.CodeInternalError || !strings.Contains(e.RPC.Message, hs.URL) || !e.Temporary() {
		t.Fatalf("err = %#v", err)
	}
}

// M-17, M-18, M-21: an MRTR input_required answer is classified and decoded;
// the retry (modern.RetryParams) goes out with a new id, the answers and the
// requestState byte-for-byte.
func TestCallToolInputRequiredRetry(t *testing.T) {
	const state = `"opaque\u00e9<state>"`
	var mu sync.Mutex
	var bodies [][]byte
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readAll(r)
		mu.Lock()
		bodies = append(bodies, body)
		n := len(bodies)
		mu.Unlock()
		req, _ := decodeReq(body)
		result := `{"resultType":"input_required","requestState":` + state + `,"inputRequests":{"k1":{"method":"elicitation/create","params":{"mode":"form","message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}}}}`
		if n > 1 {
			result = `{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`
		}
		w.Header().Set("Content-Type", "application/json")
		b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(result)})
		_, _ = w.Write(b)
	}))
	defer hs.Close()
	c := NewHTTP(hs.URL, nil)
	params := tool("ask", map[string]any{"q": 1})
	out, err := c.CallTool(ctxT(t), params, CallOptions{Capabilities: elicitCaps()})
	if err != nil || out.Type != modern.ResultInputRequired || out.Input == nil || len(out.Input.InputRequests) != 1 {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	retry, err := modern.RetryParams(params, modern.InputResponses{"k1": json.RawMessage(`{"action":"accept","content":{"n":"x"}}`)}, out.Input.RequestState)
	if err != nil {
		t.Fatal(err)
	}
	out, err = c.CallTool(ctxT(t), retry, CallOptions{Capabilities: elicitCaps()})
	if err != nil || out.Type != modern.ResultComplete {
		t.Fatalf("retry %+v, %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	first, _ := decodeReq(bodies[0])
	second, _ := decodeReq(bodies[1])
	if first.ID == second.ID {
		t.Fatal("MRTR retry reused the request id (M-03)")
	}
	if !strings.Contains(string(bodies[1]), `"requestState":`+state) {
		t.Fatalf("retry did not echo requestState byte-for-byte: %s", bodies[1])
	}
	checkEmitted(t, []recorded{{Header: http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"ask"}, "Accept": {"application/json, text/event-stream"}}, Body: bodies[1]}})
}

// mcp-go v1.2.1 answers server/discover naming 2026-07-28 but advertises the
// 2025-11-25 capabilities.tasks and keeps the legacy task shapes: its tasks
// are legacy, so the bridge serves modern clients through the modern face.
func TestProbeEraMCPGoServer(t *testing.T) {
	srv := peers.StartMCPGoServer(t, peers.MCPGoServerOptions{})
	c := NewHTTP(srv.URL, nil)
	d, err := c.Discover(ctxT(t), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(d.SupportedVersions, modern.ProtocolVersion) || d.Capabilities.HasTasksExtension() {
		t.Fatalf("mcp-go no longer answers as this test assumes (modern versions, no tasks extension): %+v", d)
	}
	if got, err := c.ProbeEra(ctxT(t)); err != nil || got != era.Legacy {
		t.Fatalf("mcp-go v1.2.1: %v, %v; want legacy (its tasks are 2025-11-25)", got, err)
	}
}
