package face_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/outbox"
	"github.com/tasksbridge/tasksbridge/legacy/face"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// cancelFaults answers the first n upstream tasks/cancel with HTTP 503 and
// passes everything else (and later cancels) to next.
type cancelFaults struct {
	next http.Handler

	mu     sync.Mutex
	n      int // cancels still to fail
	failed int
	passed int
}

func (f *cancelFaults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Method") == "tasks/cancel" {
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

func (f *cancelFaults) counts() (failed, passed int) {
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
		Retry: func(string) { p.mu.Lock(); p.retries++; p.mu.Unlock() },
	}
}

func (p *outboxProbe) awaitWait(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-p.waits:
	case <-ctx.Done():
		t.Fatal("the outbox never retried the failed upstream tasks/cancel")
	}
}

func (p *outboxProbe) awaitEnd(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-p.ended:
	case <-ctx.Done():
		t.Fatal("the upstream tasks/cancel delivery never ended")
	}
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
	up := startUpstream(t, demo.Options{})
	faults := &cancelFaults{next: up.rec, n: 2}
	fs := httptest.NewServer(faults)
	t.Cleanup(fs.Close)
	probe := newOutboxProbe()
	br := startBridge(t, up, face.Config{Upstream: fs.URL + "/mcp", Outbox: probe.config()})
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

func testOwedAcrossRestart(t *testing.T, authz string) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	faults := &cancelFaults{next: up.rec, n: 1 << 30}
	fs := httptest.NewServer(faults)
	t.Cleanup(fs.Close)
	dir := t.TempDir()

	probe1 := newOutboxProbe()
	b1, err := face.New(face.Config{Upstream: fs.URL + "/mcp", DataDir: dir, Logger: quietLogger(), Watch: fastWatch(), Outbox: probe1.config()})
	if err != nil {
		t.Fatal(err)
	}
	hs1 := httptest.NewServer(b1.Mux())
	c := newRawClient(t, hs1.URL+"/mcp")
	c.authz = authz
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	if r := c.call(ctx, "tasks/cancel", map[string]any{"taskId": id}); statusOf(t, r) != "cancelled" {
		t.Fatalf("tasks/cancel: %s", r.Envelope)
	}
	probe1.awaitWait(t, ctx) // the first attempt failed; the next waits
	_ = b1.Shutdown(ctx)
	hs1.Close()
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}

	faults.mu.Lock()
	faults.n = 0 // the upstream is healthy again
	faults.mu.Unlock()
	probe2 := newOutboxProbe()
	br := startBridge(t, up, face.Config{Upstream: fs.URL + "/mcp", DataDir: dir, Outbox: probe2.config()})
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
	if _, passed := faults.counts(); passed != 1 {
		t.Errorf("upstream took %d tasks/cancel after the restart, want 1", passed)
	}
	if authz != "" {
		var got string
		for _, r := range up.rec.byMethod("tasks/cancel") {
			got = r.Header.Get("Authorization")
		}
		if got != authz {
			t.Errorf("the resumed cancel carried Authorization %q, want the owner's", got)
		}
	}
	adm := br.b.Store().(sessionmap.Admin)
	rec, err := adm.LookupTask(ctx, id)
	if err != nil || rec.UpstreamCancelPending || rec.Status != sessionmap.StatusCancelled {
		t.Errorf("record after restart = %+v, %v; want cancelled with nothing owed", rec, err)
	}
}
