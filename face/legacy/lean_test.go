package legacyface_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// settledMem returns the heap in use and the goroutine count after a full
// collection.
func settledMem() (heap uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse, runtime.NumGoroutine()
}

// An idle legacy session is a store record plus a small table entry: no
// goroutine and no go-sdk server. 2,000 sequential initialize requests (no
// Authorization) leave the process at most 3 KiB per session above where it
// was (20,000 sessions then stay under 64 MiB), with a constant number of
// goroutines. The old face built a go-sdk server per session: 2 goroutines
// and tens of KiB each.
func TestIdleSessionsAreRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 2,000 requests")
	}
	ctx := ctxT(t, 60*time.Second)
	// The upstream without the recorder of startUpstream, which keeps every
	// request it saw (the process's memory is measured).
	srv := demo.New(demo.Options{})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	br := startBridge(t, &upEnv{url: hs.URL}, legacyface.Config{})
	warm := newRawClient(t, br.url)
	warm.initialize(ctx, nil)

	const n = 2000
	c := newRawClient(t, br.url)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`)
	heap0, g0 := settledMem()
	for i := range n {
		r, err := c.post(ctx, body, 1)
		if err != nil || r.Status != http.StatusOK || r.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize %d: %v %+v", i, err, r)
		}
	}
	heap1, g1 := settledMem()
	per := (float64(heap1) - float64(heap0)) / n
	t.Logf("%d idle sessions: %.0f B per session (heap+stacks), goroutines %d → %d", n, per, g0, g1)
	if got := br.b.Sessions(); got != n+1 {
		t.Errorf("session table holds %d, want %d", got, n+1)
	}
	if per > 3<<10 {
		t.Errorf("%.0f B per idle session, want ≤ 3 KiB (20,000 sessions ≤ 64 MiB)", per)
	}
	if g1-g0 > 8 {
		t.Errorf("goroutines grew by %d for %d idle sessions, want a constant few", g1-g0, n)
	}
}

// --max-sessions: the session beyond the bound (sessions with credentials,
// which are never evicted, and no per-principal share) gets HTTP 503 with
// Retry-After and the limit code naming the limit, and the refusal is
// counted; an existing session is still served.
func TestMaxSessionsRefusesBeyondBound(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	up := startUpstream(t, demo.Options{})
	var refused atomic.Int64
	cfg := legacyface.Config{MaxSessions: 1000, MaxSessionsPerPrincipal: -1}
	cfg.Hooks.Refused = func(ev legacyface.RefusedEvent) {
		if ev.Limit == legacyface.LimitSessions {
			refused.Add(1)
		}
	}
	br := startBridge(t, up, cfg)
	first := newRawClient(t, br.url)
	first.authz = "Bearer flood"
	first.initialize(ctx, nil)
	c := newRawClient(t, br.url)
	c.authz = "Bearer flood"
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`)
	for i := 2; i <= 1000; i++ {
		if r, err := c.post(ctx, body, 7); err != nil || r.Status != http.StatusOK {
			t.Fatalf("initialize %d: %v %+v", i, err, r)
		}
	}
	r, err := c.post(ctx, body, 7)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusServiceUnavailable || r.Err == nil || r.Err.Code != rpc.CodeLimitReached ||
		!strings.Contains(r.Err.Message, "maximum of 1000 sessions") || r.Header.Get("Mcp-Session-Id") != "" ||
		r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Err.Data), `"limit":"max-sessions","scope":"process","max":1000`) {
		t.Errorf("initialize 1001: HTTP %d %s", r.Status, r.Body)
	}
	if got := refused.Load(); got != 1 {
		t.Errorf("refusals counted: %d, want 1", got)
	}
	if r := first.call(ctx, "tasks/list", nil); r.Err != nil {
		t.Errorf("an existing session beyond the bound: %s", r.Envelope)
	}
}

// --session-idle-timeout is enforced while the bridge runs: a session idle
// longer answers 404 (docs/MIGRATION.md), its table entry is released and
// its record deleted; one that stayed active lives on. The old face served
// a live session whatever its idle time.
func TestSessionIdleTimeoutEnforced(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	st := sessionmap.NewMemory()
	br := startBridge(t, up, legacyface.Config{SessionIdleTimeout: 2 * time.Second, Clock: clock, Store: st})
	idle := newRawClient(t, br.url)
	idle.initialize(ctx, nil)
	busy := newRawClient(t, br.url)
	busy.initialize(ctx, nil)
	untouched := newRawClient(t, br.url)
	untouched.initialize(ctx, nil)
	if got := br.b.Sessions(); got != 3 {
		t.Fatalf("sessions %d, want 3", got)
	}
	for range 5 {
		advance(time.Second)
		if r := busy.call(ctx, "tasks/list", nil); r.Err != nil {
			t.Fatalf("active session: %s", r.Envelope)
		}
	}
	r, err := idle.try(ctx, "tasks/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusNotFound {
		t.Errorf("session idle 5 s with a 2 s timeout: HTTP %d %s, want 404", r.Status, r.Body)
	}
	if _, err := st.GetSession(ctx, sessionmap.Scope{Session: idle.sessionID()}); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Errorf("expired session record: %v, want deleted", err)
	}
	legacyface.Sweep(br.b) // the periodic sweep, run now
	if got := br.b.Sessions(); got != 1 {
		t.Errorf("sessions after expiry %d, want 1 (the active one; the idle ones released)", got)
	}
	if r := busy.call(ctx, "tasks/list", nil); r.Err != nil {
		t.Errorf("active session after the sweep: %s", r.Envelope)
	}
}

// L-63: a blocking tasks/result primes its stream at once instead of
// staying silent until the first keep-alive (here an hour away); the old
// face sent its first byte only then.
func TestTasksResultStreamSpeaksEarly_L63(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{KeepAlive: time.Hour})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "early"}, "task": map[string]any{}}))
	c.drainEvents()
	done := make(chan *reply, 1)
	go func() { done <- c.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c.awaitEvent(wctx, "comment")
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	if r := <-done; r.Err != nil || !strings.Contains(string(r.Result), "early") {
		t.Errorf("tasks/result: %s", r.Envelope)
	}
}

// L-62, L-63: a plain tools/call with a progressToken that the upstream
// turned into a task hears progress at the keep-alive cadence while the task
// runs, not one notification and then silence.
func TestPlainCallProgressAtKeepAliveCadence_L62(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{KeepAlive: 10 * time.Millisecond})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	c.drainEvents()
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.try(cctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "p"},
			"_meta": map[string]any{"progressToken": "tok-1"}})
		done <- err
	}()
	for range 4 {
		c.awaitEvent(ctx, "note:notifications/progress")
	}
	stop()
	<-done
	var last struct {
		Params struct {
			ProgressToken string  `json:"progressToken"`
			Progress      float64 `json:"progress"`
		} `json:"params"`
	}
	c.mu.Lock()
	notes := append([]json.RawMessage(nil), c.notes...)
	c.mu.Unlock()
	prev := 0.0
	for _, n := range notes {
		if err := json.Unmarshal(n, &last); err != nil || last.Params.ProgressToken != "tok-1" || last.Params.Progress <= prev {
			t.Errorf("progress notification %s: token or increasing progress wrong", n)
		}
		prev = last.Params.Progress
	}
}

// L-72, L-73: a principal beyond its bound of blocked waits (or concurrent
// calls) gets a JSON-RPC error at once, never a hang; the refusal is
// counted; another principal is not affected.
func TestPerPrincipalLimits_L72_L73(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	var waiters, tasks atomic.Int64
	cfg := legacyface.Config{MaxWaitersPerPrincipal: 1, MaxTasksPerPrincipal: 1}
	cfg.Hooks.Refused = func(ev legacyface.RefusedEvent) {
		switch ev.Limit {
		case legacyface.LimitWaiters:
			waiters.Add(1)
		case legacyface.LimitTasks:
			tasks.Add(1)
		}
	}
	br := startBridge(t, up, cfg)
	c := newRawClient(t, br.url)
	c.authz = "Bearer alice"
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	c.drainEvents()
	first := make(chan *reply, 1)
	go func() { first <- c.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	c.awaitEvent(ctx, "comment") // the first wait is blocked
	r := c.call(ctx, "tasks/result", map[string]any{"taskId": id})
	if r.Err == nil || !strings.Contains(r.Err.Message, "too many blocked tasks/result waits") ||
		r.Err.Code != rpc.CodeLimitReached || r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("second wait of the same principal: HTTP %d %s, want 429 with Retry-After and the limit code", r.Status, r.Envelope)
	}
	// A plain call the upstream turns into a task holds a call slot while
	// it waits: a second call of the same principal is refused.
	carol := newRawClient(t, br.url)
	carol.authz = "Bearer carol"
	carol.initialize(ctx, nil)
	carol.drainEvents()
	pctx, stopPlain := context.WithCancel(ctx)
	plainDone := make(chan struct{})
	go func() {
		defer close(plainDone)
		_, _ = carol.try(pctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "c"}})
	}()
	carol.awaitEvent(ctx, "comment")
	again := newRawClient(t, br.url)
	again.authz = "Bearer carol"
	again.setSession(carol.sessionID())
	if r := again.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}); r.Err == nil ||
		!strings.Contains(r.Err.Message, "too many concurrent tools/call requests") ||
		r.Err.Code != rpc.CodeLimitReached || r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(r.Err.Data), `"limit":"max-tasks-per-principal","scope":"principal","max":1`) {
		t.Errorf("second call of the same principal: HTTP %d %s, want 429 with Retry-After and the limit code", r.Status, r.Envelope)
	}
	stopPlain()
	<-plainDone
	other := newRawClient(t, br.url)
	other.authz = "Bearer bob"
	other.initialize(ctx, nil)
	oid := taskIDOf(t, other.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 10, "text": "bob"}, "task": map[string]any{}}))
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), oid))
	if r := other.call(ctx, "tasks/result", map[string]any{"taskId": oid}); r.Err != nil {
		t.Errorf("another principal's wait: %s", r.Envelope)
	}
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	if r := <-first; r.Err != nil {
		t.Errorf("first wait: %s", r.Envelope)
	}
	if waiters.Load() != 1 || tasks.Load() != 1 {
		t.Errorf("refusals counted: waiters %d, calls %d, want 1 and 1", waiters.Load(), tasks.Load())
	}
}

// slowTerminalStore holds every terminal UpdateStatus until release is
// closed (a slow durable write).
type slowTerminalStore struct {
	sessionmap.Store
	release chan struct{}
}

func (s *slowTerminalStore) UpdateStatus(ctx context.Context, sc sessionmap.Scope, id string, snap sessionmap.Snapshot) (sessionmap.Task, error) {
	if snap.Status.Terminal() {
		<-s.release
	}
	return s.Store.UpdateStatus(ctx, sc, id, snap)
}

// A blocked tasks/result is answered from the watcher's terminal snapshot
// without waiting for the durable write of the terminal state, and a
// tasks/get meanwhile agrees with that answer; the record follows.
func TestTerminalSnapshotAnswersBeforeDurableWrite(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	mem := sessionmap.NewMemory()
	st := &slowTerminalStore{Store: mem, release: make(chan struct{})}
	released := false
	release := func() {
		if !released {
			released = true
			close(st.release)
		}
	}
	t.Cleanup(release)
	br := startBridge(t, up, legacyface.Config{Store: st})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "fast"}, "task": map[string]any{}}))
	c.drainEvents()
	done := make(chan *reply, 1)
	go func() { done <- c.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	c.awaitEvent(ctx, "comment")
	up.srv.CompleteNow(upstreamTaskID(t, mem, id))
	r := <-done
	if r.Err != nil || !strings.Contains(string(r.Result), "fast") {
		t.Errorf("tasks/result with the durable write pending: %s", r.Envelope)
	}
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "completed" {
		t.Errorf("tasks/get with the durable write pending: %s, want completed", s)
	}
	release()
}

// A blocked tasks/result costs no goroutine of its own (no go-sdk handler,
// no per-stream keep-alive timer, no cancellation watcher): 300 waits on one
// task add at most the goroutines net/http needs per open request on both
// ends (client: caller, read and write loop; server: the connection and its
// background read), and a bounded amount of memory, most of it connection
// buffers and stacks of the in-process clients.
func TestWaiterCost(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 300 connections")
	}
	ctx := ctxT(t, 60*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{KeepAlive: 50 * time.Millisecond})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "w"}, "task": map[string]any{}}))
	const n = 300
	heap0, g0 := settledMem()
	done := make(chan *reply, n)
	for i := range n {
		w := newRawClient(t, br.url)
		w.setSession(c.sessionID())
		w.next = 1000 * (i + 1)
		go func() { done <- w.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
		w.awaitEvent(ctx, "comment")
	}
	heap1, g1 := settledMem()
	perMem := (float64(heap1) - float64(heap0)) / n
	perG := float64(g1-g0) / n
	t.Logf("%d blocked tasks/result (client and bridge in one process): %.1f KiB and %.2f goroutines per waiter", n, perMem/1024, perG)
	if perG > 5.5 {
		t.Errorf("%.2f goroutines per waiter, want ≤ 5 (3 of the client, 2 of net/http's server)", perG)
	}
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	for range n {
		if r := <-done; r.Err != nil {
			t.Fatalf("waiter: %s", r.Envelope)
		}
	}
}

// A session is a record: any bridge process on the same store serves it.
// A client initializes on one bridge and goes on with another (a replica, or
// the next process after a restart) without re-initializing, its tasks
// visible on both.
func TestSessionServedByAnyProcessOnTheStore(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	st := sessionmap.NewMemory()
	one := startBridge(t, up, legacyface.Config{Store: st})
	two := startBridge(t, up, legacyface.Config{Store: st})
	c := newRawClient(t, one.url)
	c.initialize(ctx, nil)
	other := newRawClient(t, two.url)
	other.setSession(c.sessionID())
	id := taskIDOf(t, other.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "both"}, "task": map[string]any{}}))
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
		t.Errorf("tasks/get on the first bridge of a task made on the second: %s", s)
	}
	r := c.call(ctx, "tasks/list", nil)
	if r.Err != nil || !strings.Contains(string(r.Result), id) {
		t.Errorf("tasks/list on the first bridge: %s", r.Envelope)
	}
	if one.b.Sessions() != 1 || two.b.Sessions() != 1 {
		t.Errorf("session tables: %d and %d, want the session in both", one.b.Sessions(), two.b.Sessions())
	}
}
