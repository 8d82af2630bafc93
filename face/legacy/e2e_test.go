package legacyface_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// initialize is answered from the upstream's server/discover plus
// the emulated legacy tasks capability, and the session is durable before
// the reply (L-01..L-03).
func TestInitializeFromDiscover_L01(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	st := sessionmap.NewMemory()
	br := startBridge(t, up, legacyface.Config{Store: st})
	c := newRawClient(t, br.url)
	r := c.initialize(ctx, nil)

	v := schemacheck.Load(t)
	v.Check(t, schemacheck.Legacy, "InitializeResult", r.Result)
	var res struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ServerInfo      struct{ Name string }      `json:"serverInfo"`
		Instructions    string                     `json:"instructions"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != "2025-11-25" {
		t.Errorf("protocolVersion %q", res.ProtocolVersion)
	}
	var tasks any
	_ = json.Unmarshal(res.Capabilities["tasks"], &tasks)
	want := map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	if b1, b2 := mustJSON(tasks), mustJSON(want); b1 != b2 {
		t.Errorf("capabilities.tasks = %s, want %s", b1, b2)
	}
	if _, ok := res.Capabilities["tools"]; !ok {
		t.Errorf("capabilities lack the upstream's tools: %s", r.Result)
	}
	if _, ok := res.Capabilities["extensions"]; ok {
		t.Errorf("2026-only capabilities.extensions leaked: %s", r.Result)
	}
	if res.ServerInfo.Name != "tasksbridge-demo" || !strings.Contains(res.Instructions, "Demo server") {
		t.Errorf("serverInfo/instructions not from upstream discover: %s", r.Result)
	}
	if len(up.rec.byMethod("server/discover")) == 0 {
		t.Error("the upstream saw no server/discover")
	}
	// Durable before the reply: the session is in the store as soon as the
	// client has the answer, with its full initialize params.
	sess, err := st.LookupSession(ctx, c.sessionID())
	if err != nil {
		t.Fatalf("session not stored: %v", err)
	}
	if sess.Era != era.Legacy || sess.ProtocolVersion != "2025-11-25" || !bytes.Contains(sess.InitializeParams, []byte("raw-legacy-client")) {
		t.Errorf("stored session %+v", sess)
	}
	c.checkReceived(t)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A client that negotiates an older version gets no legacy tasks (they exist
// only under 2025-11-25), plain forwarding still works, and tasks/* are
// -32601.
func TestOlderProtocolHasNoTasks(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	r := c.call(ctx, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "old", "version": "1"}})
	if r.Err != nil {
		t.Fatalf("initialize: %s", r.Envelope)
	}
	if bytes.Contains(r.Result, []byte(`"tasks"`)) || !bytes.Contains(r.Result, []byte(`"2025-06-18"`)) {
		t.Errorf("initialize result %s", r.Result)
	}
	c.setSession(r.Header.Get("Mcp-Session-Id"))
	c.proto = "2025-06-18"
	c.notify(ctx, "notifications/initialized", nil)
	g := c.call(ctx, "tasks/get", map[string]any{"taskId": "x"})
	if g.Err == nil || g.Err.Code != rpc.CodeMethodNotFound {
		t.Errorf("tasks/get on a 2025-06-18 session: %s", g.Envelope)
	}
	// task is ignored (L-05): the upstream's task is polled here and the
	// plain result comes back.
	e := c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "old"}, "task": map[string]any{}})
	if e.Err != nil || !bytes.Contains(e.Result, []byte(`"old"`)) || bytes.Contains(e.Result, []byte(`"task"`)) {
		t.Errorf("tools/call: %s", e.Envelope)
	}
}

// logging/setLevel is stored per session and stamped on later
// upstream requests; ping is answered locally.
func TestLogLevelStampedUpstream(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	st := sessionmap.NewMemory()
	br := startBridge(t, up, legacyface.Config{Store: st})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	if r := c.call(ctx, "logging/setLevel", map[string]any{"level": "warning"}); r.Err != nil {
		t.Fatalf("setLevel: %s", r.Envelope)
	}
	if sess, _ := st.LookupSession(ctx, c.sessionID()); sess.LogLevel != "warning" {
		t.Errorf("stored log level %q", sess.LogLevel)
	}
	if r := c.call(ctx, "ping", nil); r.Err != nil || string(r.Result) != "{}" {
		t.Errorf("ping: %s", r.Envelope)
	}
	for _, m := range up.rec.all() {
		if bytes.Contains(m.Body, []byte(`"ping"`)) || bytes.Contains(m.Body, []byte(`logging/setLevel`)) {
			t.Errorf("sent upstream: %s", m.Body)
		}
	}
	c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	calls := up.rec.byMethod("tools/call")
	if len(calls) != 1 || !bytes.Contains(calls[0].Body, []byte(`"io.modelcontextprotocol/logLevel":"warning"`)) {
		t.Errorf("tools/call upstream lacks the log level: %s", calls)
	}
	// The client's own capabilities travel upstream (M-01).
	if !bytes.Contains(calls[0].Body, []byte(`"elicitation":{"form":{}}`)) || !bytes.Contains(calls[0].Body, []byte(`"sampling":{}`)) ||
		!bytes.Contains(calls[0].Body, []byte(`"raw-legacy-client"`)) {
		t.Errorf("tools/call upstream lacks the client's capabilities or clientInfo: %s", calls[0].Body)
	}
}

// A tools/call without "task" that the upstream turns into a task is
// polled here; the client gets the plain result and, having given a
// progressToken, progress notifications while it waits (L-62).
func TestPlainCallOfTaskToolIsPolled(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	c.drainEvents()
	done := make(chan *reply, 1)
	go func() {
		done <- c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "polled"},
			"_meta": map[string]any{"progressToken": "p-1"}})
	}()
	c.awaitEvent(ctx, "note:notifications/progress")
	ids := up.srv.TaskIDs()
	if len(ids) != 1 {
		t.Fatalf("upstream tasks %v", ids)
	}
	up.srv.CompleteNow(ids[0])
	r := <-done
	if r.Err != nil || bytes.Contains(r.Result, []byte(legacyRelatedTask)) {
		t.Fatalf("result %s", r.Envelope)
	}
	schemacheck.Load(t).Check(t, schemacheck.Legacy, "CallToolResult", r.Result)
	if !bytes.Contains(r.Result, []byte(`"polled"`)) {
		t.Errorf("result %s", r.Result)
	}
	if len(r.Notes) == 0 || !bytes.Contains(r.Notes[0], []byte(`"progressToken":"p-1"`)) {
		t.Errorf("progress notes %s", r.Notes)
	}
	c.checkReceived(t)
}

// tasks/get is served from the watcher's cache: many polls within
// the task's pollInterval cost one upstream tasks/get.
func TestTasksGetThrottled(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{DisablePush: true, PollInterval: time.Second})
	clk := newManualClock()
	wc := fastWatch()
	wc.Clock, wc.DisablePush = clk, true
	br := startBridge(t, up, legacyface.Config{Watch: wc})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	upID := upstreamTaskID(t, br.b.Store(), id)
	for i := 0; i < 10; i++ {
		if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
			t.Fatalf("status %s", s)
		}
	}
	if n := up.srv.GetCount(upID); n != 1 {
		t.Errorf("10 legacy tasks/get within the poll interval cost %d upstream tasks/get, want 1", n)
	}
	up.srv.CompleteNow(upID)
	clk.Advance(time.Second) // one poll interval: the watcher reads again
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "completed" {
		t.Errorf("after the interval: %s", s)
	}
	if n := up.srv.GetCount(upID); n != 2 {
		t.Errorf("upstream tasks/get %d, want 2", n)
	}
}

// One watcher per upstream task, shared by every waiter: twenty
// blocked tasks/result cost the upstream polls of one.
func TestOneWatcherForManyWaiters(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{DisablePush: true, PollInterval: time.Second})
	clk := newManualClock()
	wc := fastWatch()
	wc.Clock, wc.DisablePush = clk, true
	br := startBridge(t, up, legacyface.Config{Watch: wc, KeepAlive: 5 * time.Millisecond})
	owner := newRawClient(t, br.url)
	owner.authz = "Bearer shared"
	owner.initialize(ctx, nil)
	id := taskIDOf(t, owner.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "shared"}, "task": map[string]any{}}))
	upID := upstreamTaskID(t, br.b.Store(), id)

	const n = 20
	results := make(chan *reply, n)
	clients := make([]*rawClient, n)
	for i := range clients {
		c := newRawClient(t, br.url)
		c.authz = "Bearer shared" // the same principal: every session may read the task
		c.initialize(ctx, nil)
		clients[i] = c
		go func() { results <- c.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	}
	for _, c := range clients {
		c.awaitEvent(ctx, "comment") // its tasks/result is running (keep-alives flow)
	}
	if w := br.b.Watching(); w != 1 {
		t.Errorf("%d watchers for one task, want 1", w)
	}
	clk.Advance(time.Second) // one poll for everybody
	up.srv.CompleteNow(upID)
	clk.Advance(time.Second)
	for i := 0; i < n; i++ {
		r := <-results
		if r.Err != nil || !bytes.Contains(r.Result, []byte(`"shared"`)) {
			t.Errorf("waiter: %s", r.Envelope)
		}
	}
	if g := up.srv.GetCount(upID); g > 3 {
		t.Errorf("%d waiters cost %d upstream tasks/get, want at most 3 (one watcher)", n, g)
	}
}

// An input key is answered upstream exactly once, however many
// sessions wait on the task (answered keys persisted first; docs/ARCHITECTURE.md,
// Each input key is asked once and answered once).
func TestInputAnsweredExactlyOnce(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	st := sessionmap.NewMemory()
	br := startBridge(t, up, legacyface.Config{Store: st})
	answer := func(method string, params json.RawMessage) (any, *rpc.Error) {
		return map[string]any{"action": "accept", "content": map[string]any{"answer": "once"}}, nil
	}
	a := newRawClient(t, br.url)
	a.authz = "Bearer same"
	a.initialize(ctx, nil)
	a.setHandler(answer)
	b := newRawClient(t, br.url)
	b.authz = "Bearer same"
	b.initialize(ctx, nil)
	b.setHandler(answer)
	id := taskIDOf(t, a.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Q?"}, "task": map[string]any{}}))

	var wg sync.WaitGroup
	results := make(chan *reply, 3)
	for _, c := range []*rawClient{a, a, b} { // two waiters in one session, one in another
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- c.call(ctx, "tasks/result", map[string]any{"taskId": id})
		}()
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.Err != nil || !bytes.Contains(r.Result, []byte(`"once"`)) {
			t.Errorf("waiter: %s", r.Envelope)
		}
	}
	cn := up.srv.Counters()
	if cn.TasksUpdate != 1 || cn.InputResponses != 1 || cn.DuplicateKeys != 0 {
		t.Errorf("upstream tasks/update %d, input responses %d, duplicates %d; want exactly one", cn.TasksUpdate, cn.InputResponses, cn.DuplicateKeys)
	}
	// Each session was shown the question at most once, not once per
	// waiter (M-30), and somebody was shown it.
	shown := func(c *rawClient) int {
		n := 0
		for _, m := range c.allReceived() {
			if bytes.Contains(m, []byte(`"elicitation/create"`)) {
				n++
			}
		}
		return n
	}
	if na, nb := shown(a), shown(b); na > 1 || nb > 1 || na+nb == 0 {
		t.Errorf("elicitations for one key: session a %d, session b %d; want at most one each", na, nb)
	}
	rec, err := st.LookupTask(ctx, id)
	if err != nil || len(rec.AnsweredKeys) != 1 {
		t.Errorf("answered keys %v (%v), want the one key persisted", rec.AnsweredKeys, err)
	}
	a.checkReceived(t)
	b.checkReceived(t)
}

// docs/ARCHITECTURE.md, A client giving up ends only its own wait: a client
// that gives up on its tasks/result
// (disconnect, or notifications/cancelled) ends only its own wait; the task
// and the other waiters carry on.
func TestCancelledWaitEndsOnlyItself_L86(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{KeepAlive: 5 * time.Millisecond})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "survived"}, "task": map[string]any{}}))

	quitter := newRawClient(t, br.url)
	quitter.setSession(c.sessionID())
	quitter.next = 500
	qctx, quit := context.WithCancel(ctx)
	qdone := make(chan error, 1)
	go func() {
		_, err := quitter.try(qctx, "tasks/result", map[string]any{"taskId": id})
		qdone <- err
	}()
	quitter.awaitEvent(ctx, "comment")

	canceller := newRawClient(t, br.url)
	canceller.setSession(c.sessionID())
	cdone := make(chan *reply, 1)
	canceller.next = 1000 // its tasks/result has id 1001
	go func() {
		r, _ := canceller.try(ctx, "tasks/result", map[string]any{"taskId": id})
		cdone <- r
	}()
	canceller.awaitEvent(ctx, "comment")

	stayer := newRawClient(t, br.url)
	stayer.setSession(c.sessionID())
	sdone := make(chan *reply, 1)
	stayer.next = 2000 // ids are per session: keep them apart from the others'
	go func() { sdone <- stayer.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	stayer.awaitEvent(ctx, "comment")

	quit() // disconnect
	if err := <-qdone; !errors.Is(err, context.Canceled) {
		t.Errorf("disconnected waiter: %v", err)
	}
	if n := c.notify(ctx, "notifications/cancelled", map[string]any{"requestId": 1001, "reason": "timeout"}); n.Status != http.StatusAccepted {
		t.Errorf("notifications/cancelled: HTTP %d", n.Status)
	}
	if r := <-cdone; r != nil && r.Result != nil {
		t.Errorf("cancelled tasks/result got a result: %s", r.Envelope)
	}
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
		t.Errorf("task after the cancelled waits: %s", s)
	}
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	if r := <-sdone; r.Err != nil || !bytes.Contains(r.Result, []byte(`"survived"`)) {
		t.Errorf("remaining waiter: %s", r.Envelope)
	}
}

// Keep-alives flow on a long tasks/result stream, so idle proxies do
// not cut it; the answer still arrives on the same stream.
func TestKeepAlivesOnLongWait(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{KeepAlive: 5 * time.Millisecond})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "late"}, "task": map[string]any{}}))
	c.drainEvents()
	done := make(chan *reply, 1)
	go func() { done <- c.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	c.awaitEvent(ctx, "comment")
	c.awaitEvent(ctx, "comment")
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	r := <-done
	if r.Err != nil || !strings.HasPrefix(r.ContentType, "text/event-stream") || !bytes.Contains(r.Result, []byte(`"late"`)) {
		t.Errorf("tasks/result %s %s", r.ContentType, r.Envelope)
	}
}

// L-69: with an Authorization header the principal owns its tasks:
// another principal's tasks/get, tasks/result and tasks/cancel get exactly
// the unknown-id answer, and its tasks/list omits them; a second session of
// the same principal sees them.
func TestScopeIsolationBetweenPrincipals_L69(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	alice := newRawClient(t, br.url)
	alice.authz = "Bearer alice-token"
	alice.initialize(ctx, nil)
	id := taskIDOf(t, alice.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "mine"}, "task": map[string]any{}}))

	bob := newRawClient(t, br.url)
	bob.authz = "Bearer bob-token"
	bob.initialize(ctx, nil)
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		foreign := bob.call(ctx, m, map[string]any{"taskId": id})
		unknown := bob.call(ctx, m, map[string]any{"taskId": "no-such-task"})
		if foreign.Err == nil || unknown.Err == nil || foreign.Err.Code != rpc.CodeInvalidParams {
			t.Fatalf("%s: foreign %s, unknown %s", m, foreign.Envelope, unknown.Envelope)
		}
		if got, want := strings.ReplaceAll(foreign.Err.Message, id, "ID"), strings.ReplaceAll(unknown.Err.Message, "no-such-task", "ID"); got != want {
			t.Errorf("%s: a foreign id is answered %q, an unknown one %q: existence leaks", m, got, want)
		}
	}
	if l := bob.call(ctx, "tasks/list", nil); bytes.Contains(l.Result, []byte(id)) {
		t.Errorf("bob lists alice's task: %s", l.Result)
	}
	// Bob cannot use alice's session either (404, as for an unknown one).
	hijack := newRawClient(t, br.url)
	hijack.authz = "Bearer bob-token"
	hijack.setSession(alice.sessionID())
	if r := hijack.call(ctx, "tasks/list", nil); r.Status != http.StatusNotFound {
		t.Errorf("bob on alice's session: HTTP %d", r.Status)
	}
	alice2 := newRawClient(t, br.url)
	alice2.authz = "Bearer alice-token"
	alice2.initialize(ctx, nil)
	if s := statusOf(t, alice2.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
		t.Errorf("alice's second session: %s", s)
	}
	if l := alice2.call(ctx, "tasks/list", nil); !bytes.Contains(l.Result, []byte(id)) {
		t.Errorf("alice's second session does not list her task: %s", l.Result)
	}
	// The upstream binds tasks to the same principal: the bridge forwards
	// the client's own credentials.
	for _, q := range up.rec.byMethod("tools/call") {
		if q.Header.Get("Authorization") != "Bearer alice-token" {
			t.Errorf("upstream tools/call Authorization %q", q.Header.Get("Authorization"))
		}
	}
}

// Without credentials the scope is the session: another session cannot see
// the task.
func TestSessionScopeWithoutCredentials(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	a := newRawClient(t, br.url)
	a.initialize(ctx, nil)
	id := taskIDOf(t, a.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "task": map[string]any{}}))
	b := newRawClient(t, br.url)
	b.initialize(ctx, nil)
	if r := b.call(ctx, "tasks/get", map[string]any{"taskId": id}); r.Err == nil || r.Err.Code != rpc.CodeInvalidParams {
		t.Errorf("other session: %s", r.Envelope)
	}
}

// HTTP-level refusals: an oversized body gets 413, a foreign Host
// or Origin 403 (DNS rebinding), an unknown session 404, a request without a
// session that is not initialize 400, an unsupported method 405.
func TestHTTPRefusals(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{MaxBodyBytes: 2048})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)

	big := c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": strings.Repeat("x", 4096)}})
	if big.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: HTTP %d %s", big.Status, big.Body)
	}

	post := func(mod func(*http.Request)) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, br.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		c.headers(req.Header)
		mod(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post(func(r *http.Request) { r.Host = "evil.example:80" }); s != http.StatusForbidden {
		t.Errorf("foreign Host: HTTP %d", s)
	}
	if s := post(func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }); s != http.StatusForbidden {
		t.Errorf("foreign Origin: HTTP %d", s)
	}
	if s := post(func(r *http.Request) { r.Header.Set("Origin", "http://localhost:3000") }); s != http.StatusOK {
		t.Errorf("loopback Origin: HTTP %d", s)
	}
	if s := post(func(r *http.Request) { r.Header.Set("Mcp-Session-Id", "not-a-session") }); s != http.StatusNotFound {
		t.Errorf("unknown session: HTTP %d", s)
	}
	if s := post(func(r *http.Request) { r.Header.Del("Mcp-Session-Id") }); s != http.StatusBadRequest {
		t.Errorf("no session: HTTP %d", s)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, br.url, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

// DELETE ends the session: it is gone from the store, not rehydrated, and
// its session-scoped tasks go with it.
func TestDeleteSession(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	st := sessionmap.NewMemory()
	br := startBridge(t, up, legacyface.Config{Store: st})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "task": map[string]any{}}))
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, br.url, nil)
	c.headers(req.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := st.LookupSession(ctx, c.sessionID()); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Errorf("session still stored: %v", err)
	}
	if _, err := st.LookupTask(ctx, id); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Errorf("session-scoped task still stored: %v", err)
	}
	if r := c.call(ctx, "ping", nil); r.Status != http.StatusNotFound {
		t.Errorf("after DELETE: HTTP %d", r.Status)
	}
}

// An unreachable or failing upstream is a clear -32603 naming it;
// task records are kept, and the watcher recovers with backoff once the
// upstream is back.
func TestUpstreamDown(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	st := sessionmap.NewMemory()
	br := startBridge(t, up, legacyface.Config{Store: st})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "back"}, "task": map[string]any{}}))

	up.rec.setDown(true) // 503 for everything
	for len(up.rec.hits) > 0 {
		<-up.rec.hits
	}
	r := c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	if r.Err == nil || r.Err.Code != rpc.CodeInternalError || !strings.Contains(r.Err.Message, up.url) {
		t.Errorf("tools/call with the upstream down: %s", r.Envelope)
	}
	if _, err := st.LookupTask(ctx, id); err != nil {
		t.Errorf("task record lost: %v", err)
	}
	done := make(chan *reply, 1)
	go func() { done <- c.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	up.rec.awaitHit(t, ctx, "tasks/get") // the watcher meets the outage
	up.srv.CompleteNow(upstreamTaskID(t, st, id))
	up.rec.setDown(false)
	if r := <-done; r.Err != nil || !bytes.Contains(r.Result, []byte(`"back"`)) {
		t.Errorf("tasks/result across the outage: %s", r.Envelope)
	}

	// A bridge whose upstream does not listen at all.
	dead := startBridge(t, up, legacyface.Config{Upstream: "http://127.0.0.1:1/mcp"})
	d := newRawClient(t, dead.url)
	ir := d.call(ctx, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "x", "version": "1"}})
	if ir.Err == nil || ir.Err.Code != rpc.CodeInternalError || !strings.Contains(ir.Err.Message, "127.0.0.1:1") {
		t.Errorf("initialize with no upstream: %s %s", ir.Envelope, ir.Body)
	}
}

// /healthz and /readyz share the listener: ready needs the store and the
// upstream.
func TestHealthAndReady(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	get := func(url string) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get(br.hs.URL + "/healthz"); s != http.StatusOK {
		t.Errorf("healthz %d", s)
	}
	if s := get(br.hs.URL + "/readyz"); s != http.StatusOK {
		t.Errorf("readyz %d", s)
	}
	dead := startBridge(t, up, legacyface.Config{Upstream: "http://127.0.0.1:1/mcp"})
	if s := get(dead.hs.URL + "/readyz"); s != http.StatusServiceUnavailable {
		t.Errorf("readyz without upstream %d", s)
	}
	if s := get(dead.hs.URL + "/healthz"); s != http.StatusOK {
		t.Errorf("healthz without upstream %d", s)
	}
}

// With StatusNotifications, a client with an open GET stream gets
// notifications/tasks/status when its task changes (L-61).
func TestStatusNotificationsOnGETStream_L61(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{StatusNotifications: true})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	notes := make(chan json.RawMessage, 8)
	opened := make(chan struct{})
	go c.listenGET(ctx, notes, opened)
	<-opened
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	v := schemacheck.Load(t)
	for {
		select {
		case m := <-notes:
			v.Check(t, schemacheck.Legacy, "TaskStatusNotification", m)
			if bytes.Contains(m, []byte(legacyRelatedTask)) {
				t.Errorf("status notification carries related-task _meta (L-36): %s", m)
			}
			if bytes.Contains(m, []byte(`"completed"`)) && bytes.Contains(m, []byte(id)) {
				return
			}
		case <-ctx.Done():
			t.Fatal("no completed status notification")
		}
	}
}

// listenGET opens the standalone GET stream, closes opened once the
// bridge answered, and sends every message on the stream to out.
func (c *rawClient) listenGET(ctx context.Context, out chan<- json.RawMessage, opened chan<- struct{}) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	c.headers(req.Header)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		close(opened)
		return
	}
	defer resp.Body.Close()
	close(opened)
	sc := bufio.NewScanner(resp.Body)
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		case line == "" && len(data) > 0:
			c.record(data)
			select {
			case out <- data:
			case <-ctx.Done():
				return
			}
			data = nil
		}
	}
}
