package legacyface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/outbox"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// methodFaults answers the first n upstream requests of method with HTTP
// 503 and passes everything else (and later ones) to next.
type methodFaults struct {
	next   http.Handler
	method string

	mu     sync.Mutex
	n      int // requests still to fail
	failed int
	passed int
}

func (f *methodFaults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Method") == f.method {
		f.mu.Lock()
		fail := f.n > 0
		if fail {
			f.n--
			f.failed++
		} else {
			f.passed++
		}
		f.mu.Unlock()
		if fail {
			http.Error(w, "upstream overloaded", http.StatusServiceUnavailable)
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

func (f *methodFaults) counts() (failed, passed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed, f.passed
}

// outboxProbe is an injected outbox clock and metrics sink: every backoff
// wait is reported and waits until the test releases it, and the end of
// each delivery is signalled (no sleeps).
type outboxProbe struct {
	waits   chan time.Duration
	release chan struct{}
	ended   chan struct{}

	mu      sync.Mutex
	retries int
	kinds   []string // the method of each retry
}

func newOutboxProbe() *outboxProbe {
	return &outboxProbe{waits: make(chan time.Duration, 16), release: make(chan struct{}), ended: make(chan struct{}, 16)}
}

func (p *outboxProbe) config() outbox.Config {
	return outbox.Config{
		Wait: func(ctx context.Context, d time.Duration) error {
			p.waits <- d
			select {
			case <-p.release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		Pending: func(_ string, d int) {
			if d < 0 {
				p.ended <- struct{}{}
			}
		},
		Retry: func(kind string) { p.mu.Lock(); p.retries++; p.kinds = append(p.kinds, kind); p.mu.Unlock() },
	}
}

func (p *outboxProbe) awaitWait(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-p.waits:
	case <-ctx.Done():
		t.Fatal("the outbox never retried the failed upstream side effect")
	}
}

func (p *outboxProbe) awaitEnd(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-p.ended:
	case <-ctx.Done():
		t.Fatal("the upstream side effect's delivery never ended")
	}
}

// faultyBridge is a bridge (memory store, probed outbox) in front of an
// upstream whose first n requests of method fail with 503.
func faultyBridge(t *testing.T, method string, n int) (*upEnv, *methodFaults, *outboxProbe, *bridgeEnv) {
	t.Helper()
	up := startUpstream(t, demo.Options{})
	faults := &methodFaults{next: up.rec, method: method, n: n}
	fs := httptest.NewServer(faults)
	t.Cleanup(fs.Close)
	probe := newOutboxProbe()
	return up, faults, probe, startBridge(t, up, legacyface.Config{Upstream: fs.URL + "/mcp", Outbox: probe.config()})
}

func owedCancel(t *testing.T, st sessionmap.Store, id string) bool {
	t.Helper()
	rec, err := st.(sessionmap.Admin).LookupTask(context.Background(), id)
	if err != nil {
		t.Fatalf("lookup %s: %v", id, err)
	}
	return rec.UpstreamCancelPending
}

// A tasks/cancel the upstream refuses twice (503) is pinned for the client
// at once (L-58) and retried with backoff until the upstream takes it (L-57);
// then nothing is owed any more.
func TestUpstreamCancelRetriedUntilAcknowledged(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	_, faults, probe, br := faultyBridge(t, "tasks/cancel", 2)
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	if r := c.call(ctx, "tasks/cancel", map[string]any{"taskId": id}); statusOf(t, r) != "cancelled" {
		t.Fatalf("tasks/cancel: %s", r.Envelope)
	}
	for range 2 {
		probe.awaitWait(t, ctx)
		probe.release <- struct{}{}
	}
	probe.awaitEnd(t, ctx)
	if failed, passed := faults.counts(); failed != 2 || passed != 1 {
		t.Errorf("upstream tasks/cancel failed %d and passed %d times, want 2 and 1", failed, passed)
	}
	if owedCancel(t, br.b.Store(), id) {
		t.Error("the record still owes the upstream a cancel after it was acknowledged")
	}
	probe.mu.Lock()
	defer probe.mu.Unlock()
	if probe.retries != 2 {
		t.Errorf("retries = %d, want 2", probe.retries)
	}
}

// A cancel still owed when the bridge stops is delivered by the next bridge
// on the same data directory (durable outbox): at once for a client without
// Authorization; for one with it, with that client's next request (the
// store never holds credentials, and the upstream binds tasks to them).
func TestUpstreamCancelOwedAcrossRestart(t *testing.T) {
	for _, authz := range []string{"", "Bearer owner-token"} {
		t.Run("authz="+strconv.FormatBool(authz != ""), func(t *testing.T) { testOwedAcrossRestart(t, authz) })
	}
}

// restartRig is an upstream whose requests of one method fail (503) until
// heal, and a first bridge on a data directory with one client.
type restartRig struct {
	up     *upEnv
	faults *methodFaults
	fsURL  string
	dir    string
	b1     *legacyface.Bridge
	hs1    *httptest.Server
	probe1 *outboxProbe
	c      *rawClient
}

func newRestartRig(t *testing.T, ctx context.Context, method, authz string) *restartRig {
	t.Helper()
	r := &restartRig{up: startUpstream(t, demo.Options{}), dir: t.TempDir(), probe1: newOutboxProbe()}
	r.faults = &methodFaults{next: r.up.rec, method: method, n: 1 << 30}
	fs := httptest.NewServer(r.faults)
	t.Cleanup(fs.Close)
	r.fsURL = fs.URL + "/mcp"
	var err error
	r.b1, err = legacyface.New(legacyface.Config{Upstream: r.fsURL, DataDir: r.dir, Logger: quietLogger(), Watch: fastWatch(), Outbox: r.probe1.config()})
	if err != nil {
		t.Fatal(err)
	}
	r.hs1 = httptest.NewServer(r.b1.Mux())
	r.c = newRawClient(t, r.hs1.URL+"/mcp")
	r.c.authz = authz
	r.c.initialize(ctx, nil)
	return r
}

// restart stops the first bridge (drained is called once it has shut
// down), heals the upstream and starts a second bridge on the same data
// directory with probe's outbox.
func (r *restartRig) restart(t *testing.T, ctx context.Context, probe *outboxProbe, drained func()) *bridgeEnv {
	t.Helper()
	_ = r.b1.Shutdown(ctx)
	if drained != nil {
		drained()
	}
	r.hs1.Close()
	if err := r.b1.Close(); err != nil {
		t.Fatal(err)
	}
	r.faults.mu.Lock()
	r.faults.n = 0 // the upstream is healthy again
	r.faults.mu.Unlock()
	return startBridge(t, r.up, legacyface.Config{Upstream: r.fsURL, DataDir: r.dir, Outbox: probe.config()})
}

// checkDelivered asserts that the upstream took the owed side effect once
// after the restart, with the owner's credentials when it has some.
func (r *restartRig) checkDelivered(t *testing.T, authz string) {
	t.Helper()
	method := r.faults.method
	if _, passed := r.faults.counts(); passed != 1 {
		t.Errorf("upstream took %d %s after the restart, want 1", passed, method)
	}
	if authz == "" {
		return
	}
	var got string
	for _, q := range r.up.rec.byMethod(method) {
		got = q.Header.Get("Authorization")
	}
	if got != authz {
		t.Errorf("the resumed %s carried Authorization %q, want the owner's", method, got)
	}
}

func testOwedAcrossRestart(t *testing.T, authz string) {
	ctx := ctxT(t, 30*time.Second)
	rig := newRestartRig(t, ctx, "tasks/cancel", authz)
	faults, c := rig.faults, rig.c
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	if r := c.call(ctx, "tasks/cancel", map[string]any{"taskId": id}); statusOf(t, r) != "cancelled" {
		t.Fatalf("tasks/cancel: %s", r.Envelope)
	}
	rig.probe1.awaitWait(t, ctx) // the first attempt failed; the next waits
	probe2 := newOutboxProbe()
	br := rig.restart(t, ctx, probe2, nil)
	if authz != "" {
		if _, passed := faults.counts(); passed != 0 {
			t.Fatalf("the owed cancel went out without the owner's credentials")
		}
		c2 := newRawClient(t, br.url)
		c2.authz = authz
		c2.initialize(ctx, nil)
		c2.call(ctx, "tasks/list", nil)
	}
	probe2.awaitEnd(t, ctx)
	rig.checkDelivered(t, authz)
	adm := br.b.Store().(sessionmap.Admin)
	rec, err := adm.LookupTask(ctx, id)
	if err != nil || rec.UpstreamCancelPending || rec.Status != sessionmap.StatusCancelled {
		t.Errorf("record after restart = %+v, %v; want cancelled with nothing owed", rec, err)
	}
}

// elicitAnswer answers every elicitation/create with "yes" and counts them.
type elicitAnswer struct {
	mu sync.Mutex
	n  int
}

func (e *elicitAnswer) handle(method string, _ json.RawMessage) (any, *rpc.Error) {
	e.mu.Lock()
	e.n++
	e.mu.Unlock()
	return map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}, nil
}

func (e *elicitAnswer) asked() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

func owedAnswers(t *testing.T, st sessionmap.Store, id string) sessionmap.Task {
	t.Helper()
	rec, err := st.(sessionmap.Admin).LookupTask(context.Background(), id)
	if err != nil {
		t.Fatalf("lookup %s: %v", id, err)
	}
	return rec
}

// A client's input answer that the upstream refuses twice (503) is retried
// by the outbox with backoff until the upstream takes it: one tasks/update
// reaches the upstream, the key is answered exactly once (M-28, M-30), the
// client is asked once, and the retries are counted under tasks/update.
func TestUpstreamInputAnswerRetriedUntilAcknowledged(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up, faults, probe, br := faultyBridge(t, "tasks/update", 2)
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	var ans elicitAnswer
	c.setHandler(ans.handle)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Q?"}, "task": map[string]any{}}))
	res := make(chan *reply, 1)
	go func() { res <- c.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	for range 2 {
		probe.awaitWait(t, ctx)
		probe.release <- struct{}{}
	}
	probe.awaitEnd(t, ctx)
	if r := <-res; r.Err != nil || !bytes.Contains(r.Result, []byte(`"yes"`)) {
		t.Fatalf("tasks/result: %s", r.Envelope)
	}
	if failed, passed := faults.counts(); failed != 2 || passed != 1 {
		t.Errorf("upstream tasks/update failed %d and passed %d times, want 2 and 1", failed, passed)
	}
	if cn := up.srv.Counters(); cn.InputResponses != 1 || cn.DuplicateKeys != 0 {
		t.Errorf("upstream input responses %d, duplicates %d; want exactly one", cn.InputResponses, cn.DuplicateKeys)
	}
	if n := ans.asked(); n != 1 {
		t.Errorf("the client was asked %d times, want once", n)
	}
	if rec := owedAnswers(t, br.b.Store(), id); len(rec.AnsweredKeys) != 1 || rec.OwedAnswers != nil {
		t.Errorf("record after the acknowledgement: answered %v, owed %s; want one key, nothing owed", rec.AnsweredKeys, rec.OwedAnswers)
	}
	probe.mu.Lock()
	defer probe.mu.Unlock()
	if probe.retries != 2 || len(probe.kinds) != 2 || probe.kinds[0] != "tasks/update" {
		t.Errorf("retries = %d %v, want 2 of tasks/update", probe.retries, probe.kinds)
	}
	c.checkReceived(t)
}

// An input answer the upstream has not acknowledged when the bridge stops
// is delivered by the next bridge on the same data directory (durable
// outbox), at once for a client without Authorization and with the owner's
// next request otherwise; the client is not asked again for it (M-30).
func TestUpstreamInputAnswerOwedAcrossRestart(t *testing.T) {
	for _, authz := range []string{"", "Bearer owner-token"} {
		t.Run("authz="+strconv.FormatBool(authz != ""), func(t *testing.T) { testAnswerOwedAcrossRestart(t, authz) })
	}
}

func testAnswerOwedAcrossRestart(t *testing.T, authz string) {
	ctx := ctxT(t, 30*time.Second)
	rig := newRestartRig(t, ctx, "tasks/update", authz)
	up, faults, c := rig.up, rig.faults, rig.c
	var ans elicitAnswer
	c.setHandler(ans.handle)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Q?"}, "task": map[string]any{}}))
	first := make(chan *reply, 1)
	go func() { first <- c.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	rig.probe1.awaitWait(t, ctx) // the client answered; the first tasks/update failed
	probe2 := newOutboxProbe()
	br := rig.restart(t, ctx, probe2, func() { <-first })
	if n := ans.asked(); n != 1 {
		t.Fatalf("before the restart the client was asked %d times, want once", n)
	}
	if authz != "" {
		if _, passed := faults.counts(); passed != 0 {
			t.Fatalf("the owed answer went out without the owner's credentials")
		}
		sid := c.sessionID()
		c = newRawClient(t, br.url) // a new session of the same principal
		c.authz = authz
		c.initialize(ctx, nil)
		if c.sessionID() == sid {
			t.Fatal("expected a new session")
		}
		c.setHandler(ans.handle)
	} else {
		c.url = br.url // same session, after the restart
	}
	r := c.call(ctx, "tasks/result", map[string]any{"taskId": id})
	if r.Err != nil || !bytes.Contains(r.Result, []byte(`"yes"`)) {
		t.Fatalf("tasks/result after the restart: %s", r.Envelope)
	}
	probe2.awaitEnd(t, ctx)
	if n := ans.asked(); n != 1 {
		t.Errorf("the client was asked %d times in all, want once (its stored answer is delivered, not asked again)", n)
	}
	rig.checkDelivered(t, authz)
	if cn := up.srv.Counters(); cn.InputResponses != 1 || cn.DuplicateKeys != 0 {
		t.Errorf("upstream input responses %d, duplicates %d; want exactly one", cn.InputResponses, cn.DuplicateKeys)
	}
	if rec := owedAnswers(t, br.b.Store(), id); rec.OwedAnswers != nil || len(rec.AnsweredKeys) != 1 {
		t.Errorf("record after restart: answered %v, owed %s; want one key, nothing owed", rec.AnsweredKeys, rec.OwedAnswers)
	}
	c.checkReceived(t)
}
