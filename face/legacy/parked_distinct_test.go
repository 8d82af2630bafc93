package legacyface_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Parked waits on distinct tasks hold no goroutine either: each task's
// parked-wait hub and its watcher (its task pushed on the session's shared
// notification stream, no read due) run only when an event comes. 1,000
// blocked tasks/result calls on 1,000 distinct tasks add ≤ 0.2 goroutines
// and a bounded amount of memory per wait (a hub and a watcher goroutine
// per task used to add two goroutines and their stacks each); every wait
// still ends when its task does.
func TestParkedWaitsOnDistinctTasksHoldNoGoroutine(t *testing.T) {
	const n = 1000
	ctx := ctxT(t, 180*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, manyWaitsConfig(nil))
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	ids := startSlowTasks(ctx, t, c, n)
	c.hc.CloseIdleConnections()
	addr := strings.TrimPrefix(strings.TrimSuffix(br.url, "/mcp"), "http://")
	if err := legacyface.AwaitParkedIdle(ctx, br.b, 0); err != nil {
		t.Fatal(err)
	}
	settledGC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	base := runtime.NumGoroutine()

	// 64 KiB of whitespace between members: a parked wait that kept the
	// buffer its message was read into would keep it all.
	conns := openWaits(t, addr, c.sessionID(), ids, 64<<10, 512)
	if err := legacyface.AwaitParked(ctx, br.b, n); err != nil {
		t.Fatal(err)
	}
	// Every task's watcher is pushed and parked, and no hub has work left.
	if err := legacyface.AwaitParkedIdle(ctx, br.b, n); err != nil {
		t.Fatal(err)
	}
	grew := runtime.NumGoroutine() - base
	settledGC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	perWait := (int64(after.HeapAlloc+after.StackInuse) - int64(before.HeapAlloc+before.StackInuse)) / n
	t.Logf("%d parked waits on distinct tasks: %d more goroutines, %d B heap+stack each (heap %d, stacks %d)", n, grew, perWait,
		(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, (int64(after.StackInuse)-int64(before.StackInuse))/n)
	if float64(grew)/n > 0.2 {
		t.Errorf("%d parked waits on distinct tasks added %d goroutines (%.2f each), want ≤ 0.2 each", n, grew, float64(grew)/n)
	}
	// A parked wait's records, its socket's and the watcher's state, not
	// stacks nor its message's buffer; the measure also holds this
	// process's client side and the test upstream's record of every
	// request (about 90 KiB each with a hub and a watcher goroutine per
	// task; more than its 64 KiB message while a parked wait kept it;
	// 12–17 KiB of heap in use and stacks before the live heap, HeapAlloc
	// after two collections, was measured instead: mostly 5.5–16 KiB now,
	// with runs up to 25 KiB, with or without the upstream's request log:
	// this process's live heap also moves with the test's in-process
	// upstream and client. The bound sits above that noise and under the
	// 64 KiB message a wait must not keep; the wait's own records are
	// bounded by TestParkedWaitLiveHeapOnDistinctTasks).
	// Under -race the figures are two to three times as large (29–43 KiB
	// of heap in use, with the package's other tests running alongside).
	limit := int64(32 << 10)
	if raceBuild {
		limit = 60 << 10
	}
	if perWait > limit {
		t.Errorf("%d parked waits on distinct tasks: %d B of heap and stacks each, want ≤ %d KiB", n, perWait, limit>>10)
	}

	completeAndCheckAnswers(ctx, t, br.b, up.srv, ids, conns)
}

// completeAndCheckAnswers ends every task of ids upstream, then checks that
// the parked wait on ids[i], read from conns[i] (request id i+1, a task made
// with text "task-i"), answers with that task's result, and that no wait
// stays parked.
func completeAndCheckAnswers(ctx context.Context, t *testing.T, b *legacyface.Bridge, srv *demo.Server, ids []string, conns []*bufio.Reader) {
	t.Helper()
	for _, id := range ids {
		srv.CompleteNow(upstreamTaskID(t, b.Store(), id))
	}
	checkAnswers(ctx, t, b, conns)
}

// checkAnswers reads each wait's answer (conns[i] waits on the task whose
// text is task-i, request id i+1) and waits until none is parked.
func checkAnswers(ctx context.Context, t *testing.T, b *legacyface.Bridge, conns []*bufio.Reader) {
	t.Helper()
	for i, r := range conns {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("wait %d: %v", i, err)
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("wait %d: body: %v", i, err)
		}
		if !strings.Contains(string(got), fmt.Sprintf("task-%d", i)) || !strings.Contains(string(got), fmt.Sprintf(`"id":%d`, i+1)) {
			t.Fatalf("wait %d: answer %q", i, got)
		}
	}
	if err := legacyface.AwaitParked(ctx, b, 0); err != nil {
		t.Fatal(err)
	}
}

// heldReadStore holds the hubs' GetTask calls while hold is set (a store
// whose reads queue behind a burst), counting the reads held. Only the
// hubs': the watchers' own steps are bounded on their own (runtime/watch).
type heldReadStore struct {
	sessionmap.Store
	hold    atomic.Bool
	release chan struct{}
	held    atomic.Int64
}

func (s *heldReadStore) GetTask(ctx context.Context, sc sessionmap.Scope, id string) (sessionmap.Task, error) {
	if s.hold.Load() && calledFrom("(*parkHub).step") {
		s.held.Add(1)
		<-s.release
	}
	return s.Store.GetTask(ctx, sc, id)
}

// A burst of task ends reaching the hubs of 400 parked waits, whose store
// reads are held, runs a bounded number of hub drives at once: the other
// hubs wait as queue entries, not as a goroutine each (a drive per hub
// would add 400). Every wait is still answered once the reads go on.
func TestHubDrivesAreBounded(t *testing.T) {
	const n = 400
	ctx := ctxT(t, 180*time.Second)
	up := startUpstream(t, demo.Options{})
	st := &heldReadStore{Store: sessionmap.NewMemory(), release: make(chan struct{})}
	br := startBridge(t, up, manyWaitsConfig(st))
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	ids := startSlowTasks(ctx, t, c, n)
	addr := strings.TrimPrefix(strings.TrimSuffix(br.url, "/mcp"), "http://")
	conns := openWaits(t, addr, c.sessionID(), ids, 0, 512)
	if err := legacyface.AwaitParkedIdle(ctx, br.b, n); err != nil {
		t.Fatal(err)
	}
	upIDs := make([]string, n)
	for i, id := range ids {
		upIDs[i] = upstreamTaskID(t, st.Store, id)
	}
	base := runtime.NumGoroutine()
	st.hold.Store(true)
	released := false
	defer func() {
		if !released {
			close(st.release)
		}
	}()
	for _, id := range upIDs {
		up.srv.CompleteNow(id)
	}
	// Every hub woke: its drive runs (its read held) or waits its turn.
	for deadline := time.Now().Add(60 * time.Second); legacyface.HubsDriving(br.b) < n; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("%d hubs driving after the tasks ended (%d reads held), want %d", legacyface.HubsDriving(br.b), st.held.Load(), n)
		}
	}
	grew := settledGoroutinesAbove(base, 250)
	t.Logf("%d hubs woken with their reads held: %d reads held, %d more goroutines", n, st.held.Load(), grew)
	if grew > 250 {
		t.Errorf("%d hubs woken with their reads held added %d goroutines, want ≤ 250", n, grew)
	}
	st.hold.Store(false)
	close(st.release)
	released = true
	checkAnswers(ctx, t, br.b, conns)
}

// manyWaitsConfig is a bridge for thousands of waits of one principal on
// store st (nil: startBridge's): no per-principal limits, no idle
// retirement and no safety read while a test counts.
func manyWaitsConfig(st sessionmap.Store) legacyface.Config {
	return legacyface.Config{
		Store:                  st,
		MaxWaitersPerPrincipal: -1, MaxTasksPerPrincipal: -1,
		Watch: watch.Config{MinPollInterval: 5 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
			IdleTimeout: time.Hour, PushPollInterval: time.Hour, Jitter: -1},
	}
}

// startSlowTasks starts n tasks of the upstream's slow_task (ten minutes,
// text task-0 … task-n-1) on c's session and returns their ids.
func startSlowTasks(ctx context.Context, t *testing.T, c *rawClient, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 600000, "text": fmt.Sprintf("task-%d", i)}, "task": map[string]any{}}))
	}
	return ids
}

// openWaits sends a tasks/result on each of ids (request id i+1, pad bytes
// of whitespace between its members), each on a connection of its own to
// addr in session sid, and returns readers (of bufSize) of their answers.
func openWaits(t *testing.T, addr, sid string, ids []string, pad, bufSize int) []*bufio.Reader {
	t.Helper()
	conns := make([]*bufio.Reader, len(ids))
	for i, id := range ids {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s"method":"tasks/result","params":{"taskId":%q}}`, i+1, strings.Repeat(" ", pad), id)
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s",
			addr, sid, len(body), body)
		conns[i] = bufio.NewReaderSize(conn, bufSize)
	}
	return conns
}

// calledFrom reports whether a function whose name ends in fn is on the
// caller's stack.
func calledFrom(fn string) bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, fn) {
			return true
		}
		if !more {
			return false
		}
	}
}

// settledGoroutinesAbove returns the goroutines added since base, once at
// most limit remain or after a bound (goroutines ending their work may
// still be unwinding; one that stays blocked still counts).
func settledGoroutinesAbove(base, limit int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		extra := runtime.NumGoroutine() - base
		if extra <= limit || time.Now().After(deadline) {
			return extra
		}
		runtime.Gosched()
	}
}
