package legacyface_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

var t0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

func ctxT(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// ---- upstream -----------------------------------------------------------

// recorded is one HTTP request the bridge sent upstream.
type recorded struct {
	Header http.Header
	Body   []byte
}

type recorder struct {
	next   http.Handler
	mu     sync.Mutex
	reqs   []recorded
	down   bool        // answer 503 to everything (upstream outage)
	hits   chan string // the method of every request, as it arrives (never blocks)
	served chan string // the method of every request, once answered (never blocks)
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{Header: req.Header.Clone(), Body: body})
	down := r.down
	r.mu.Unlock()
	if r.hits != nil {
		select {
		case r.hits <- req.Header.Get("Mcp-Method"):
		default:
		}
	}
	if down {
		http.Error(w, "upstream down for maintenance", http.StatusServiceUnavailable)
		return
	}
	r.next.ServeHTTP(w, req)
	if r.served != nil {
		select {
		case r.served <- req.Header.Get("Mcp-Method"):
		default:
		}
	}
}

func (r *recorder) setDown(v bool) {
	r.mu.Lock()
	r.down = v
	r.mu.Unlock()
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

func (r *recorder) byMethod(method string) []recorded {
	var out []recorded
	for _, q := range r.all() {
		if m, err := jsonrpc.DecodeMessage(q.Body); err == nil {
			if req, ok := m.(*jsonrpc.Request); ok && req.Method == method {
				out = append(out, q)
			}
		}
	}
	return out
}

type upEnv struct {
	srv   *demo.Server
	clock *demo.FakeClock
	url   string
	rec   *recorder
	hs    *httptest.Server
}

// startUpstream runs the embedded modern server on 127.0.0.1 behind a
// recorder; every request the bridge sent it is schema-checked at the end.
func startUpstream(t *testing.T, opts demo.Options) *upEnv {
	t.Helper()
	clk := demo.NewFakeClock(t0)
	if opts.Clock == nil {
		opts.Clock = clk
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	s := demo.New(opts)
	rec := &recorder{next: s.Handler(), hits: make(chan string, 256), served: make(chan string, 256)}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rec)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		s.Close()
		hs.Close()
	})
	u := &upEnv{srv: s, clock: clk, url: hs.URL + "/mcp", rec: rec, hs: hs}
	t.Cleanup(func() { checkUpstreamRequests(t, rec.all()) })
	return u
}

// checkUpstreamRequests validates what the bridge sent upstream: schema, the
// per-request _meta (M-01, M-02, M-20) and the routing headers (M-10, M-32).
func checkUpstreamRequests(t *testing.T, reqs []recorded) {
	t.Helper()
	v := schemacheck.Load(t)
	defs := map[string]struct {
		s   schemacheck.Schema
		def string
	}{
		modern.MethodDiscover:            {schemacheck.Modern, "DiscoverRequest"},
		modern.MethodToolsCall:           {schemacheck.Modern, "CallToolRequest"},
		modern.MethodToolsList:           {schemacheck.Modern, "ListToolsRequest"},
		modern.MethodSubscriptionsListen: {schemacheck.Modern, "SubscriptionsListenRequest"},
		modern.MethodTasksGet:            {schemacheck.Ext, "GetTaskRequest"},
		modern.MethodTasksUpdate:         {schemacheck.Ext, "UpdateTaskRequest"},
		modern.MethodTasksCancel:         {schemacheck.Ext, "CancelTaskRequest"},
	}
	for _, q := range reqs {
		m, err := jsonrpc.DecodeMessage(q.Body)
		req, _ := m.(*jsonrpc.Request)
		if err != nil || req == nil {
			t.Errorf("bridge sent upstream a non-request: %s", q.Body)
			continue
		}
		if req.Method == legacyTasksResult || req.Method == "tasks/list" {
			t.Errorf("bridge sent the removed method %s upstream (M-34)", req.Method)
		}
		if d, ok := defs[req.Method]; ok {
			v.Check(t, d.s, d.def, q.Body)
		} else {
			v.Check(t, schemacheck.Modern, "JSONRPCRequest", q.Body)
		}
		var p struct {
			Meta   json.RawMessage `json:"_meta"`
			TaskID string          `json:"taskId"`
			Name   string          `json:"name"`
			Task   json.RawMessage `json:"task"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			t.Errorf("%s params: %v", req.Method, err)
			continue
		}
		if p.Task != nil {
			t.Errorf("%s carried a legacy params.task upstream (M-34): %s", req.Method, req.Params)
		}
		meta, err := modern.DecodeRequestMetaObject(p.Meta)
		if err != nil || meta.ProtocolVersion != modern.ProtocolVersion || meta.ClientCapabilities == nil ||
			!meta.ClientCapabilities.HasTasksExtension() || meta.ClientInfo == nil {
			t.Errorf("%s _meta lacks a per-request field (M-01/M-02/M-20): %s", req.Method, p.Meta)
		}
		if _, ok := meta.Other[legacyRelatedTask]; ok {
			t.Errorf("%s carried related-task _meta upstream: %s", req.Method, p.Meta)
		}
		if got := q.Header.Get("MCP-Protocol-Version"); got != modern.ProtocolVersion {
			t.Errorf("%s: MCP-Protocol-Version %q", req.Method, got)
		}
		if got := q.Header.Get("Mcp-Method"); got != req.Method {
			t.Errorf("%s: Mcp-Method %q", req.Method, got)
		}
		want := ""
		switch req.Method {
		case modern.MethodTasksGet, modern.MethodTasksUpdate, modern.MethodTasksCancel:
			want = p.TaskID
		case modern.MethodToolsCall:
			want = p.Name
		}
		if want != "" {
			if got, err := modern.DecodeHeaderValue(q.Header.Get("Mcp-Name")); err != nil || got != want {
				t.Errorf("%s: Mcp-Name %q, want %q (M-10/M-32)", req.Method, q.Header.Get("Mcp-Name"), want)
			}
		}
		if q.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: Mcp-Session-Id sent to a modern upstream", req.Method)
		}
	}
}

const (
	legacyTasksResult = "tasks/result"
	legacyRelatedTask = "io.modelcontextprotocol/related-task"
)

// ---- bridge -------------------------------------------------------------

type bridgeEnv struct {
	b   *legacyface.Bridge
	hs  *httptest.Server
	url string
	// watchClock is the watchers' clock when a test drives it (nil: the
	// wall clock).
	watchClock *manualClock
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fastWatch polls quickly so tests do not wait on wall-clock intervals
// longer than needed (the demo's pollIntervalMs is 20 ms).
func fastWatch() watch.Config {
	return watch.Config{MinPollInterval: 5 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, IdleTimeout: 5 * time.Second, Jitter: -1}
}

// startBridge runs a bridge in front of up on 127.0.0.1 (memory store unless
// cfg names one).
func startBridge(t *testing.T, up *upEnv, cfg legacyface.Config) *bridgeEnv {
	t.Helper()
	if cfg.Upstream == "" && cfg.UpstreamClient == nil && cfg.UpstreamCommand == "" {
		cfg.Upstream = up.url
	}
	if cfg.Store == nil && cfg.DataDir == "" {
		cfg.Store = sessionmap.NewMemory()
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	if cfg.Watch.MinPollInterval == 0 {
		cfg.Watch = fastWatch()
	}
	b, err := legacyface.New(cfg)
	if err != nil {
		t.Fatalf("face.New: %v", err)
	}
	hs := httptest.NewServer(b.Mux())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Shutdown(ctx)
		hs.Close()
		if err := b.Close(); err != nil {
			t.Errorf("bridge close: %v", err)
		}
	})
	return &bridgeEnv{b: b, hs: hs, url: hs.URL + "/mcp"}
}

// ---- raw legacy client --------------------------------------------------

// rawClient speaks 2025-11-25 Streamable HTTP by hand: go-sdk has no legacy
// tasks client. It answers server→client requests with onRequest and keeps
// every message it received for schema checks.
type rawClient struct {
	t     *testing.T
	url   string
	hc    *http.Client
	authz string

	mu        sync.Mutex
	sid       string
	proto     string
	next      int
	onRequest func(method string, params json.RawMessage) (any, *rpc.Error)
	received  []json.RawMessage // every message from the bridge
	requests  []json.RawMessage // server→client requests
	notes     []json.RawMessage // notifications
	comments  int               // SSE comment lines (keep-alives)
	lastID    string            // the last SSE event id seen (resumable streams)
	events    chan string       // "comment", "request:<method>", "note:<method>" as they arrive (never blocks)
}

func newRawClient(t *testing.T, url string) *rawClient {
	return &rawClient{t: t, url: url, hc: &http.Client{}, events: make(chan string, 256)}
}

// reply is one answer of the bridge to a POST.
type reply struct {
	Status      int
	ContentType string
	Header      http.Header
	Body        []byte          // raw body (JSON responses and errors)
	Envelope    json.RawMessage // the JSON-RPC response
	Result      json.RawMessage
	Err         *rpc.Error
	Notes       []json.RawMessage // notifications on this stream
	Requests    []json.RawMessage // server→client requests on this stream
}

func (c *rawClient) headers(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sid != "" {
		h.Set("Mcp-Session-Id", c.sid)
	}
	if c.proto != "" {
		h.Set("MCP-Protocol-Version", c.proto)
	}
	if c.authz != "" {
		h.Set("Authorization", c.authz)
	}
}

func (c *rawClient) newID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return c.next
}

// post sends body and reads the whole answer, answering server→client
// requests found on an SSE stream as they come.
func (c *rawClient) post(ctx context.Context, body []byte, wantID any) (*reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	c.headers(req.Header)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &reply{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Header: resp.Header}
	if strings.HasPrefix(r.ContentType, "text/event-stream") {
		err := c.readSSE(ctx, resp.Body, r, wantID)
		return r, err
	}
	r.Body, err = io.ReadAll(resp.Body)
	if err != nil {
		return r, err
	}
	if strings.HasPrefix(r.ContentType, "application/json") && len(r.Body) > 0 {
		c.record(r.Body)
		r.fill(r.Body)
	}
	return r, nil
}

func (r *reply) fill(env []byte) {
	r.Envelope = append(json.RawMessage(nil), env...)
	var e struct {
		Result json.RawMessage `json:"result"`
		Error  *rpc.Error      `json:"error"`
	}
	_ = json.Unmarshal(env, &e)
	r.Result, r.Err = e.Result, e.Error
}

func (c *rawClient) record(msg []byte) {
	c.mu.Lock()
	c.received = append(c.received, append(json.RawMessage(nil), msg...))
	c.mu.Unlock()
}

func (c *rawClient) readSSE(ctx context.Context, body io.Reader, r *reply, wantID any) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			c.mu.Lock()
			c.comments++
			c.mu.Unlock()
			c.event("comment")
		case strings.HasPrefix(line, "id:"):
			c.mu.Lock()
			c.lastID = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			c.mu.Unlock()
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		case line == "":
			if len(data) == 0 {
				continue
			}
			msg := data
			data = nil
			c.record(msg)
			var probe struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(msg, &probe); err != nil {
				return fmt.Errorf("SSE data is not JSON: %s", msg)
			}
			switch {
			case probe.Method != "" && probe.ID != nil:
				c.event("request:" + probe.Method)
				r.Requests = append(r.Requests, msg)
				c.mu.Lock()
				c.requests = append(c.requests, msg)
				h := c.onRequest
				c.mu.Unlock()
				c.answer(ctx, probe.ID, probe.Method, probe.Params, h)
			case probe.Method != "":
				c.event("note:" + probe.Method)
				r.Notes = append(r.Notes, msg)
				c.mu.Lock()
				c.notes = append(c.notes, msg)
				c.mu.Unlock()
			default:
				r.fill(msg)
				if wantID == nil || sameID(probe.ID, wantID) {
					return nil
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if r.Envelope == nil {
		return io.ErrUnexpectedEOF
	}
	return nil
}

func (c *rawClient) event(e string) {
	select {
	case c.events <- e:
	default:
	}
}

// drainEvents forgets the events seen so far (e.g. keep-alives of earlier
// streams), so awaitEvent sees only later ones.
func (c *rawClient) drainEvents() {
	for {
		select {
		case <-c.events:
		default:
			return
		}
	}
}

// awaitEvent waits for an event with the given prefix.
func (c *rawClient) awaitEvent(ctx context.Context, prefix string) string {
	c.t.Helper()
	for {
		select {
		case e := <-c.events:
			if strings.HasPrefix(e, prefix) {
				return e
			}
		case <-ctx.Done():
			c.t.Fatalf("no %q event", prefix)
			return ""
		}
	}
}

func sameID(raw json.RawMessage, want any) bool {
	w, _ := json.Marshal(want)
	return bytes.Equal(bytes.TrimSpace(raw), w)
}

// answer POSTs the client's response to a server→client request.
func (c *rawClient) answer(ctx context.Context, id json.RawMessage, method string, params json.RawMessage, h func(string, json.RawMessage) (any, *rpc.Error)) {
	env := map[string]any{"jsonrpc": "2.0", "id": id}
	if h == nil {
		env["error"] = rpc.Errorf(rpc.CodeMethodNotFound, "no handler for %s", method)
	} else if res, rerr := h(method, params); rerr != nil {
		env["error"] = rerr
	} else {
		env["result"] = res
	}
	b, _ := json.Marshal(env)
	r, err := c.post(ctx, b, nil)
	if err != nil {
		c.t.Errorf("answering %s: %v", method, err)
		return
	}
	if r.Status != http.StatusAccepted {
		c.t.Errorf("answering %s: HTTP %d %s", method, r.Status, r.Body)
	}
}

// call sends a request and returns the bridge's answer (failing the test on
// transport errors).
func (c *rawClient) call(ctx context.Context, method string, params any) *reply {
	c.t.Helper()
	r, err := c.try(ctx, method, params)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return r
}

func (c *rawClient) try(ctx context.Context, method string, params any) (*reply, error) {
	id := c.newID()
	env := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		env["params"] = params
	}
	b, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	return c.post(ctx, b, id)
}

// notify sends a notification.
func (c *rawClient) notify(ctx context.Context, method string, params any) *reply {
	c.t.Helper()
	env := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		env["params"] = params
	}
	b, _ := json.Marshal(env)
	r, err := c.post(ctx, b, nil)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return r
}

// defaultCaps are the capabilities of a typical legacy client (TS SDK
// example): form elicitation and sampling, no client tasks.
var defaultCaps = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}, "sampling": map[string]any{}}

// initialize performs the 2025-11-25 handshake.
func (c *rawClient) initialize(ctx context.Context, caps map[string]any) *reply {
	c.t.Helper()
	if caps == nil {
		caps = defaultCaps
	}
	r := c.call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "raw-legacy-client", "version": "1.0.0"},
	})
	if r.Status != http.StatusOK || r.Err != nil {
		c.t.Fatalf("initialize: HTTP %d %s %s", r.Status, r.Envelope, r.Body)
	}
	c.mu.Lock()
	c.sid = r.Header.Get("Mcp-Session-Id")
	c.proto = "2025-11-25"
	c.mu.Unlock()
	if c.sid == "" {
		c.t.Fatalf("initialize: no Mcp-Session-Id")
	}
	if n := c.notify(ctx, "notifications/initialized", nil); n.Status != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: HTTP %d %s", n.Status, n.Body)
	}
	return r
}

func (c *rawClient) sessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sid
}

func (c *rawClient) setSession(sid string) {
	c.mu.Lock()
	c.sid, c.proto = sid, "2025-11-25"
	c.mu.Unlock()
}

func (c *rawClient) setHandler(h func(method string, params json.RawMessage) (any, *rpc.Error)) {
	c.mu.Lock()
	c.onRequest = h
	c.mu.Unlock()
}

func (c *rawClient) allReceived() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage(nil), c.received...)
}

// checkReceived validates every message the bridge sent this client against
// the 2025-11-25 schema (JSONRPCMessage; results of known methods are
// checked by the tests themselves against their exact $def).
func (c *rawClient) checkReceived(t *testing.T) {
	t.Helper()
	v := schemacheck.Load(t)
	for _, m := range c.allReceived() {
		v.Check(t, schemacheck.Legacy, "JSONRPCMessage", m)
		var probe struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(m, &probe)
		switch probe.Method {
		case "elicitation/create":
			v.Check(t, schemacheck.Legacy, "ElicitRequest", m)
		case "sampling/createMessage":
			v.Check(t, schemacheck.Legacy, "CreateMessageRequest", m)
		case "roots/list":
			v.Check(t, schemacheck.Legacy, "ListRootsRequest", m)
		case "notifications/tasks/status":
			v.Check(t, schemacheck.Legacy, "TaskStatusNotification", m)
		case "notifications/progress":
			v.Check(t, schemacheck.Legacy, "ProgressNotification", m)
		case "notifications/message":
			v.Check(t, schemacheck.Legacy, "LoggingMessageNotification", m)
		}
	}
}

// taskIDOf reads result.task.taskId of a CreateTaskResult.
func taskIDOf(t *testing.T, r *reply) string {
	t.Helper()
	var res struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if r.Err != nil || json.Unmarshal(r.Result, &res) != nil || res.Task.TaskID == "" {
		t.Fatalf("not a CreateTaskResult: HTTP %d %s %s", r.Status, r.Envelope, r.Body)
	}
	return res.Task.TaskID
}

// statusOf reads result.status of a tasks/get or tasks/cancel result.
func statusOf(t *testing.T, r *reply) string {
	t.Helper()
	var res struct {
		Status string `json:"status"`
	}
	if r.Err != nil || json.Unmarshal(r.Result, &res) != nil || res.Status == "" {
		t.Fatalf("not a Task result: HTTP %d %s %s", r.Status, r.Envelope, r.Body)
	}
	return res.Status
}

// upstreamTaskID maps a local task id to the upstream's through the store.
func upstreamTaskID(t *testing.T, st sessionmap.Store, id string) string {
	t.Helper()
	adm, ok := st.(sessionmap.Admin)
	if !ok {
		t.Fatal("store has no Admin view")
	}
	rec, err := adm.LookupTask(context.Background(), id)
	if err != nil {
		t.Fatalf("lookup %s: %v", id, err)
	}
	return rec.UpstreamTaskID
}

// awaitServed waits until the upstream has answered a request of method.
func (r *recorder) awaitServed(t *testing.T, ctx context.Context, method string) {
	t.Helper()
	for {
		select {
		case m := <-r.served:
			if m == method {
				return
			}
		case <-ctx.Done():
			t.Fatalf("the upstream answered no %s", method)
		}
	}
}

// awaitHit waits until the upstream receives a request of method.
func (r *recorder) awaitHit(t *testing.T, ctx context.Context, method string) {
	t.Helper()
	for {
		select {
		case m := <-r.hits:
			if m == method {
				return
			}
		case <-ctx.Done():
			t.Fatalf("the upstream saw no %s", method)
		}
	}
}

// lookupTask maps a local task id to its upstream id (for the demo's hooks).
func lookupTask(br *bridgeEnv, id string) (string, error) {
	adm, ok := br.b.Store().(sessionmap.Admin)
	if !ok {
		return "", fmt.Errorf("store has no Admin view")
	}
	rec, err := adm.LookupTask(context.Background(), id)
	if err != nil {
		return "", fmt.Errorf("lookup %s: %w", id, err)
	}
	return rec.UpstreamTaskID, nil
}

// manualClock is a watch.Clock the test advances by hand, so watcher polls
// happen only when the test says (no wall-clock waits).
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c       *manualClock
	at      time.Time
	ch      chan time.Time
	stopped bool
	fired   bool
}

func newManualClock() *manualClock { return &manualClock{now: time.Now()} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) NewTimer(d time.Duration) watch.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.fired = true
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves time on and fires every timer that became due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.fired = true
			t.ch <- c.now
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
}

func (t *manualTimer) C() <-chan time.Time { return t.ch }

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped && !t.fired
	t.stopped = true
	return was
}
