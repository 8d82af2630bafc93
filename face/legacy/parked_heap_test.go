package legacyface_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The live heap a parked tasks/result keeps, one wait per task as in the
// load tool's streams phase (docs/PERFORMANCE.md, Waits on distinct tasks):
// the face behind the request edge (which gives every upstream call its
// X-Forwarded-* headers), HeapAlloc after a GC, before and after n waits
// park. The figure holds the parked wait's records in this face, the task's
// watcher (runtime/watch), both ends of the socket, the test client's reader
// and the upstream's listen state; TASKSBRIDGE_PARKED_HEAP_PROFILE names a file that receives a heap
// profile of the parked state (every allocation sampled) to see which.
func TestParkedWaitLiveHeapOnDistinctTasks(t *testing.T) {
	const n = 1000
	if p := os.Getenv("TASKSBRIDGE_PARKED_HEAP_PROFILE"); p != "" {
		old := runtime.MemProfileRate
		runtime.MemProfileRate = 1
		t.Cleanup(func() { runtime.MemProfileRate = old })
	}
	ctx := ctxT(t, 180*time.Second)
	srv, upURL := startBareUpstream(t)
	b, err := legacyface.New(legacyface.Config{
		Upstream: upURL, Store: sessionmap.NewMemory(), Logger: quietLogger(),
		MaxWaitersPerPrincipal: -1, MaxTasksPerPrincipal: -1,
		// No idle retirement and no safety read while the test counts.
		Watch: watch.Config{MinPollInterval: 5 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
			IdleTimeout: time.Hour, PushPollInterval: time.Hour, Jitter: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := edge.New(edge.Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	mux := b.Mux()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		er := new(edge.Request)
		if !e.Begin(w, r, er) {
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(er.Body)))
		mux.ServeHTTP(w, r.WithContext(edge.NewContext(r.Context(), er)))
	}))
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Shutdown(sctx)
		hs.Close()
		if err := b.Close(); err != nil {
			t.Errorf("bridge close: %v", err)
		}
	})
	c := newRawClient(t, hs.URL+"/mcp")
	c.initialize(ctx, nil)
	// From before the tasks are made: what a task's creation leaves (its
	// binding, its records in the store and the upstream) counts too, as it
	// does in the load tool's figure.
	settledGC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	ids := startSlowTasks(ctx, t, c, n)
	c.hc.CloseIdleConnections()
	addr := strings.TrimPrefix(hs.URL, "http://")
	if err := legacyface.AwaitParkedIdle(ctx, b, 0); err != nil {
		t.Fatal(err)
	}

	conns := openWaits(t, addr, c.sessionID(), ids, 0, 16)
	if err := legacyface.AwaitParked(ctx, b, n); err != nil {
		t.Fatal(err)
	}
	if err := legacyface.AwaitParkedIdle(ctx, b, n); err != nil {
		t.Fatal(err)
	}
	settledGC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	perWait := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d parked waits on distinct tasks: %d B of live heap each", n, perWait)
	if p := os.Getenv("TASKSBRIDGE_PARKED_HEAP_PROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	// 7.2-8.3 KiB before the parked wait's own records were cut (the hub's
	// cancel pin, its timer and map, a whole task record, a copy of the
	// request's forwarded headers and upstream options per wait and per
	// task, the stream's record); 6.5-7.1 KiB now, 9-16 KiB under -race.
	limit := int64(8 << 10)
	if raceBuild {
		limit = 32 << 10
	}
	if perWait > limit && os.Getenv("TASKSBRIDGE_PARKED_HEAP_PROFILE") == "" { // profiling every allocation costs heap too
		t.Errorf("%d parked waits on distinct tasks: %d B of live heap each, want ≤ %d B", n, perWait, limit)
	}

	completeAndCheckAnswers(ctx, t, b, srv, ids, conns)
}

// A tasks/cancel wakes a parked tasks/result on the task even when the
// upstream ignores the cancel (L-58, L-59): the wait answers that the task
// was cancelled (L-41). The pin pokes the task's hub, found by the task's
// id; the watcher's state after the cancel may reach the hub first, and
// either way the hub's step reads the pinned record.
func TestParkedWaitWokenByPinnedCancel(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{IgnoreCancel: true})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "pinned"}, "task": map[string]any{}}))
	got := make(chan *reply, 1)
	go func() {
		r, err := c.try(ctx, "tasks/result", map[string]any{"taskId": id})
		if err != nil {
			t.Errorf("tasks/result: %v", err)
		}
		got <- r
	}()
	if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
		t.Fatal(err)
	}
	if r := c.call(ctx, "tasks/cancel", map[string]any{"taskId": id}); statusOf(t, r) != "cancelled" {
		t.Fatalf("tasks/cancel: %s", r.Envelope)
	}
	select {
	case r := <-got:
		if r == nil {
			return
		}
		if r.Err == nil || r.Err.Code != -32603 || !strings.Contains(r.Err.Message, "cancelled") {
			t.Fatalf("tasks/result after a pinned cancel: %s", r.Envelope)
		}
	case <-ctx.Done():
		t.Fatal("the parked wait was not woken by the pinned cancel")
	}
	if err := legacyface.AwaitParked(ctx, br.b, 0); err != nil {
		t.Fatal(err)
	}
}

// startBareUpstream runs the embedded modern server without the tests'
// request log (startUpstream's recorder): a heap figure then holds the
// bridge's records, not a copy of every request the bridge sent, such as
// the watchers' re-listens of up to 1,000 task ids each, whose number
// varies from run to run.
func startBareUpstream(t *testing.T) (*demo.Server, string) {
	t.Helper()
	srv := demo.New(demo.Options{Clock: demo.NewFakeClock(t0), PollInterval: 20 * time.Millisecond})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})
	return srv, hs.URL + "/mcp"
}

// settledGC collects twice: the second collection frees what the first
// moved into the sync.Pools' victim caches (request buffers of up to the
// largest body seen), which would otherwise count in a heap figure.
func settledGC() {
	runtime.GC()
	runtime.GC()
}
