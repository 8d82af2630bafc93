package router

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

func collect(p *msgParser, out *[]string) {
	p.onMsg = func(b []byte) { *out = append(*out, string(b)) }
}

func TestMsgParserSSEFraming(t *testing.T) {
	var got []string
	p := newMsgParser("text/event-stream; charset=utf-8", nil)
	collect(p, &got)
	// Split across writes at awkward places; CRLF line ends; a comment
	// (keep-alive), an event with two data lines, an id field.
	for _, chunk := range []string{
		": keep-alive\r\n\r\n",
		"event: message\r\nid: 1\r\nda", "ta: {\"a\":", "1}\r\n\r\n",
		"data: {\"b\":\ndata: 2}\n\n",
		"data: {\"c\":3}\n", // ended by close, not a blank line
	} {
		p.feed([]byte(chunk))
	}
	p.close()
	want := []string{`{"a":1}`, "{\"b\":\n2}", `{"c":3}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q", got, want)
	}
}

// A JSON body is dispatched once, as soon as it is complete (so the answer
// is recorded before the client has it), and a batch message by message.
func TestMsgParserJSON(t *testing.T) {
	var got []string
	p := newMsgParser("application/json", nil)
	collect(p, &got)
	p.feed([]byte(`{"jsonrpc":"2.0","id":1,"result":{"x":"}"`))
	if len(got) != 0 {
		t.Fatalf("dispatched an incomplete body: %q", got)
	}
	p.feed([]byte(`}}`))
	if len(got) != 1 {
		t.Fatalf("complete body not dispatched before close: %q", got)
	}
	p.close()
	if len(got) != 1 {
		t.Fatalf("dispatched twice: %q", got)
	}

	got = nil
	p = newMsgParser("application/json", nil)
	collect(p, &got)
	p.feed([]byte(`[{"id":1,"result":{}},{"id":2,"error":{"code":-32601,"message":"x"}}]`))
	p.close()
	if len(got) != 2 {
		t.Errorf("batch: %q", got)
	}
}

func TestMsgParserOverflow(t *testing.T) {
	var got []string
	p := newMsgParser("text/event-stream", nil)
	collect(p, &got)
	p.feed([]byte("data: "))
	p.feed([]byte(strings.Repeat("x", maxSniff+1)))
	p.feed([]byte("\n\ndata: {\"ok\":1}\n\n"))
	p.close()
	if !p.overflow || len(got) != 1 || got[0] != `{"ok":1}` {
		t.Errorf("overflow %v, events %d", p.overflow, len(got))
	}
}

func TestBoundedMapForgetsOldest(t *testing.T) {
	b := newBoundedMap[int](3)
	for i, k := range []string{"a", "b", "c", "d"} {
		b.put(k, i)
	}
	if _, ok := b.get("a"); ok || b.len() != 3 {
		t.Errorf("oldest kept: len %d", b.len())
	}
	b.put("b", 10) // re-put refreshes b
	b.put("e", 4)
	if _, ok := b.get("b"); !ok {
		t.Error("refreshed entry evicted")
	}
	if _, ok := b.get("c"); ok {
		t.Error("c should be the oldest and evicted")
	}
	if v, ok := b.take("e"); !ok || v != 4 {
		t.Error("take")
	}
	if _, ok := b.get("e"); ok {
		t.Error("take did not remove")
	}
	for i := range 10_000 {
		b.put(string(rune('A'+i%50))+"x", i)
	}
	if b.len() > 3 || len(b.order) > 2*3+16+1 {
		t.Errorf("grew: len %d order %d", b.len(), len(b.order))
	}
}

func tasksActive(t *testing.T, m *metrics.Metrics, want map[string]int) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("# HELP tasksbridge_tasks_active Tasks this process tracks, by current status.\n# TYPE tasksbridge_tasks_active gauge\n")
	for _, s := range []string{"cancelled", "completed", "failed", "input_required", "working"} {
		sb.WriteString("tasksbridge_tasks_active{status=\"" + s + "\"} " + itoa(want[s]) + "\n")
	}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(sb.String()), "tasksbridge_tasks_active"); err != nil {
		t.Error(err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// The metering store follows every task it sees through its statuses
// (tasksbridge_tasks_active), forgets deleted and expired ones, and times
// every operation with its outcome.
func TestMeteredStoreTracksTasks(t *testing.T) {
	ctx := context.Background()
	m := metrics.New(metrics.Options{})
	now := time.Now()
	st := newMeteredStore(sessionmap.NewMemory(sessionmap.WithClock(func() time.Time { return now })), m, nil)
	st.now = func() time.Time { return now }
	sc := sessionmap.Scope{Session: "s1"}
	ttl := int64(60_000)
	for _, id := range []string{"t1", "t2"} {
		if err := st.CreateTask(ctx, sessionmap.Task{ID: id, Scope: sc, Direction: sessionmap.LegacyToModern, Origin: sessionmap.OriginUpstreamTask, TTLMs: &ttl}); err != nil {
			t.Fatal(err)
		}
	}
	tasksActive(t, m, map[string]int{"working": 2})
	if _, err := st.UpdateStatus(ctx, sc, "t1", sessionmap.Snapshot{Status: sessionmap.StatusInputRequired}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateStatus(ctx, sc, "t1", sessionmap.Snapshot{Status: sessionmap.StatusCompleted, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PinCancel(ctx, sc, "t2"); err != nil {
		t.Fatal(err)
	}
	tasksActive(t, m, map[string]int{"completed": 1, "cancelled": 1})
	// A terminal cancel attempt and a foreign read change nothing.
	if _, err := st.PinCancel(ctx, sc, "t1"); !errors.Is(err, sessionmap.ErrTerminal) {
		t.Fatalf("pin of a completed task: %v", err)
	}
	if _, err := st.GetTask(ctx, sessionmap.Scope{Session: "other"}, "t1"); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Fatal(err)
	}
	tasksActive(t, m, map[string]int{"completed": 1, "cancelled": 1})
	if d, o, ok := st.origin("t1"); !ok || d != "legacy_to_modern" || o != metrics.OriginUpstream {
		t.Errorf("origin(t1) = %q %q %v", d, o, ok)
	}

	// Deleting the session's tasks forgets them.
	if _, err := st.DeleteSessionTasks(ctx, sc); err != nil {
		t.Fatal(err)
	}
	tasksActive(t, m, nil)

	// An expired task is forgotten by the next sweep.
	if err := st.CreateTask(ctx, sessionmap.Task{ID: "t3", Scope: sc, Direction: sessionmap.ModernToLegacy, Origin: sessionmap.OriginUpstreamTask, TTLMs: &ttl, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if err := st.CreateTask(ctx, sessionmap.Task{ID: "t4", Scope: sc, Direction: sessionmap.ModernToLegacy, Origin: sessionmap.OriginSynthesized}); err != nil {
		t.Fatal(err)
	}
	tasksActive(t, m, map[string]int{"working": 1})

	if got := storeOps(t, m, "create_task", "ok"); got != 4 {
		t.Errorf("create_task ok = %v", got)
	}
	if got := storeOps(t, m, "pin_cancel", "terminal"); got != 1 {
		t.Errorf("pin_cancel terminal = %v", got)
	}
	if got := storeOps(t, m, "get_task", "not_found"); got != 1 {
		t.Errorf("get_task not_found = %v", got)
	}
}

// storeOps reads tasksbridge_store_operations_total{op, outcome}.
func storeOps(t *testing.T, m *metrics.Metrics, op, outcome string) float64 {
	t.Helper()
	return counterValue(t, m, "tasksbridge_store_operations_total", map[string]string{"op": op, "outcome": outcome})
}

// counterValue reads counter name's series whose labels include want (0
// when there is none).
func counterValue(t *testing.T, m *metrics.Metrics, name string, want map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, mt := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range mt.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			for k, v := range want {
				if l[k] != v {
					continue series
				}
			}
			return mt.GetCounter().GetValue()
		}
	}
	return 0
}

// A modern client's input requests are counted when it answers them
// (inputRequests in an answer, inputResponses in a later request), once.
func TestWireMeterModernInputs(t *testing.T) {
	m := metrics.New(metrics.Options{})
	mt := newWireMeter(m, nil)
	req := func(body string) *exchange {
		ex := mt.request(metrics.EraModern, metrics.EraLegacy, "", readClientMsg([]byte(body)), nil)
		if ex == nil {
			t.Fatalf("not a request: %s", body)
		}
		return ex
	}
	// An MRTR round on tools/call, then a task's input on tasks/get.
	ex := req(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`)
	ex.message([]byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"k1":{"method":"elicitation/create","params":{}}},"requestState":"s"}}`))
	ex.finish(200, false, false)
	ex = req(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"T"}}`)
	ex.message([]byte(`{"jsonrpc":"2.0","id":2,"result":{"taskId":"T","status":"input_required","inputRequests":{"k2":{"method":"sampling/createMessage","params":{}}}}}`))
	ex.finish(200, false, false)
	for range 2 { // a duplicate answer is not counted again
		req(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","inputResponses":{"k1":{}},"requestState":"s"}}`).finish(200, false, false)
		req(`{"jsonrpc":"2.0","id":4,"method":"tasks/update","params":{"taskId":"T","inputResponses":{"k2":{},"unknown":{}}}}`).finish(200, false, false)
	}
	const want = `
# HELP tasksbridge_input_requests_total Input requests (elicitation, sampling, roots) relayed between a task and a client, by method and outcome.
# TYPE tasksbridge_input_requests_total counter
tasksbridge_input_requests_total{method="elicitation/create",outcome="ok"} 1
tasksbridge_input_requests_total{method="sampling/createMessage",outcome="ok"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "tasksbridge_input_requests_total"); err != nil {
		t.Error(err)
	}
}

// Outcomes of answers: JSON-RPC codes, isError, HTTP refusals without a
// body, streams that end without an answer.
func TestExchangeOutcomes(t *testing.T) {
	m := metrics.New(metrics.Options{})
	mt := newWireMeter(m, nil)
	run := func(answer string, status int, cancelled bool) {
		ex := mt.request(metrics.EraLegacy, metrics.EraModern, "", readClientMsg([]byte(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}`)), nil)
		if answer != "" {
			ex.message([]byte(`{"jsonrpc":"2.0","id":"b","result":{}}`)) // another id: ignored
			ex.message([]byte(answer))
		}
		ex.finish(status, false, cancelled)
	}
	run(`{"jsonrpc":"2.0","id":"a","result":{"content":[],"isError":true}}`, 200, false)
	run(`{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"x"}}`, 200, false)
	run(`{"jsonrpc":"2.0","id":"a","error":{"code":-32021,"message":"x"}}`, 400, false)
	run("", 404, false)
	run("", 200, true)
	run("", 200, false)
	run("", 503, false)
	const want = `
# HELP tasksbridge_requests_total Client requests handled, by client era, upstream era, MCP method and outcome.
# TYPE tasksbridge_requests_total counter
tasksbridge_requests_total{client_era="legacy",method="tools/call",outcome="cancelled",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tools/call",outcome="internal",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tools/call",outcome="invalid_params",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tools/call",outcome="invalid_request",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tools/call",outcome="missing_capability",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tools/call",outcome="tool_error",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tools/call",outcome="upstream_unavailable",upstream_era="modern"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "tasksbridge_requests_total"); err != nil {
		t.Error(err)
	}
}

// meteredUpstream is the upstream the meter tests send to: each method
// names one way an upstream answers.
func meteredUpstream(t *testing.T) *httptest.Server {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		switch req.Method {
		case "plain400": // a legacy server refusing a sessionless request
			http.Error(w, "Bad Request: session id required", http.StatusBadRequest)
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32022,"message":"modern only","data":{"supported":["2026-07-28"]}}}`))
		case "unknown": // a modern server's 404 + JSON-RPC -32601
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32601,"message":"no"}}`))
		case "error": // a JSON answer with its length: EOF comes with its last bytes
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32602,"message":"no"}}`))
		case "chunked": // a JSON answer without a length: EOF comes alone
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,`))
			w.(http.Flusher).Flush()
			w.Write([]byte(`"result":{}}`))
		case "tasks/get":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"))
			w.(http.Flusher).Flush()
			w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":" + string(req.ID) + ",\"result\":{}}\n\n"))
		case "noanswer": // an SSE stream that ends without the answer
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(": keep-alive\n\n"))
		default:
			http.Error(w, "oops", http.StatusBadGateway)
		}
	}))
	t.Cleanup(hs.Close)
	return hs
}

// The upstream meter counts every request by code bucket and drops the
// cached era when the upstream stops behaving like it (§3.4, M-08): a
// transport failure, a modern request refused without a JSON-RPC body, a
// legacy initialize refused with a modern error; not for a modern JSON-RPC
// error, and never for probes (ctxNoEraFeedback).
func TestUpstreamMeterEraFeedback(t *testing.T) {
	hs := meteredUpstream(t)
	m := metrics.New(metrics.Options{})
	var invalidated atomic.Int32
	u := &upstreamMeter{m: m, invalidate: func() { invalidated.Add(1) }}
	hc := &http.Client{Transport: &meterTransport{next: http.DefaultTransport, u: u}}
	send := func(ctx context.Context, url, method string, modernReq bool) {
		body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if modernReq {
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		}
		resp, err := hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	ctx := context.Background()
	check := func(what string, want int32) {
		t.Helper()
		if got := invalidated.Swap(0); got != want {
			t.Errorf("%s: invalidated %d times, want %d", what, got, want)
		}
	}
	send(ctx, hs.URL, "plain400", true)
	check("modern request, 400 without JSON-RPC body", 1)
	send(context.WithValue(ctx, ctxNoEraFeedback, true), hs.URL, "plain400", true)
	check("the same during a probe", 0)
	send(ctx, hs.URL, "initialize", false)
	check("initialize refused with -32022", 1)
	send(ctx, hs.URL, "unknown", true)
	check("modern 404 with a JSON-RPC body", 0)
	send(ctx, hs.URL, "tasks/get", true)
	check("answered", 0)
	send(ctx, hs.URL, "other", true)
	check("502", 0)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	send(ctx, dead, "tasks/get", true)
	check("connection refused", 1)

	const want = `
# HELP tasksbridge_upstream_requests_total Requests sent to the upstream server, by method and JSON-RPC code bucket.
# TYPE tasksbridge_upstream_requests_total counter
tasksbridge_upstream_requests_total{code="-32022",method="initialize"} 1
tasksbridge_upstream_requests_total{code="-32601",method="other"} 1
tasksbridge_upstream_requests_total{code="ok",method="tasks/get"} 1
tasksbridge_upstream_requests_total{code="transport",method="other"} 3
tasksbridge_upstream_requests_total{code="transport",method="tasks/get"} 1
# HELP tasksbridge_upstream_polls_total Upstream tasks/get polls made by task watchers.
# TYPE tasksbridge_upstream_polls_total counter
tasksbridge_upstream_polls_total 2
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "tasksbridge_upstream_requests_total", "tasksbridge_upstream_polls_total"); err != nil {
		t.Error(err)
	}
}

// fakeConn is an mcp.Connection fed by channels.
type fakeConn struct {
	in     chan jsonrpc.Message
	closed chan struct{}
}

func (c *fakeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
func (c *fakeConn) Write(context.Context, jsonrpc.Message) error { return nil }
func (c *fakeConn) Close() error                                 { return nil }
func (c *fakeConn) SessionID() string                            { return "" }

// The stdio half pairs requests and responses by id; requests still open
// when the connection dies count as transport failures.
func TestMeterConn(t *testing.T) {
	m := metrics.New(metrics.Options{})
	fc := &fakeConn{in: make(chan jsonrpc.Message, 4), closed: make(chan struct{})}
	c := newMeterConn(fc, &upstreamMeter{m: m})
	ctx := context.Background()
	id1, _ := jsonrpc.MakeID(float64(1))
	id2, _ := jsonrpc.MakeID("two")
	id3, _ := jsonrpc.MakeID(float64(3))
	_ = c.Write(ctx, &jsonrpc.Request{ID: id1, Method: "tools/call"})
	_ = c.Write(ctx, &jsonrpc.Request{ID: id2, Method: "tasks/get"})
	_ = c.Write(ctx, &jsonrpc.Request{ID: id3, Method: "tools/list"})
	_ = c.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"})
	fc.in <- &jsonrpc.Response{ID: id2, Result: json.RawMessage(`{}`)}
	fc.in <- &jsonrpc.Response{ID: id1, Error: &jsonrpc.Error{Code: -32602, Message: "bad"}}
	for range 2 {
		if _, err := c.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(fc.closed)
	if _, err := c.Read(ctx); err == nil {
		t.Fatal("read after close")
	}
	const want = `
# HELP tasksbridge_upstream_requests_total Requests sent to the upstream server, by method and JSON-RPC code bucket.
# TYPE tasksbridge_upstream_requests_total counter
tasksbridge_upstream_requests_total{code="-32602",method="tools/call"} 1
tasksbridge_upstream_requests_total{code="ok",method="tasks/get"} 1
tasksbridge_upstream_requests_total{code="transport",method="tools/list"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "tasksbridge_upstream_requests_total"); err != nil {
		t.Error(err)
	}
}

// On passthrough the upstream request is settled from the client
// exchange's decode of the same bytes (exchange.attach), not by a second
// parser: every count and every era feedback of the direct meter above
// still holds, and each is recorded before the client has read the end of
// its answer (the checks below run right after the client read it, with no
// wait).
func TestPassthroughUpstreamMeter(t *testing.T) {
	hs := meteredUpstream(t)
	m := metrics.New(metrics.Options{})
	s, err := New(Config{Upstream: hs.URL, UpstreamEra: "modern", Store: sessionmap.NewMemory(), Metrics: m,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var invalidated atomic.Int32
	s.upMeter.invalidate = func() { invalidated.Add(1) }
	br := httptest.NewServer(s.Handler())
	defer br.Close()

	value := func(name, code, method string) float64 {
		return counterValue(t, m, name, map[string]string{"code": code, "method": method})
	}
	upstream := func(code, method string) float64 {
		return value("tasksbridge_upstream_requests_total", code, method)
	}
	for _, tc := range []struct {
		method, code, label string
		invalidates         int32
	}{
		{"plain400", "transport", "other", 1},
		{"error", "-32602", "other", 0},
		{"chunked", "ok", "other", 0},
		{"tasks/get", "ok", "tasks/get", 0},
		{"noanswer", "transport", "other", 0},
		{"other", "transport", "other", 0},
	} {
		before := upstream(tc.code, tc.label)
		body := `{"jsonrpc":"2.0","id":7,"method":"` + tc.method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		req, _ := http.NewRequest(http.MethodPost, br.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got := upstream(tc.code, tc.label) - before; got != 1 {
			t.Errorf("%s: upstream {code=%s,method=%s} went up by %v, want 1", tc.method, tc.code, tc.label, got)
		}
		if got := invalidated.Swap(0); got != tc.invalidates {
			t.Errorf("%s: era invalidated %d times, want %d", tc.method, got, tc.invalidates)
		}
	}
	if polls := value("tasksbridge_upstream_polls_total", "", ""); polls != 0 {
		t.Errorf("passed-through tasks/get counted as %v polls", polls)
	}
}
