package legacyface_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// restartable is a modern upstream that can restart empty: every task it
// held is forgotten, as after a crash of a server that keeps tasks in
// memory (a later tasks/get answers -32602, M-27).
type restartable struct {
	*upEnv
	opts demo.Options
	cur  atomic.Pointer[demo.Server]
	// stalled is a method the upstream receives and never answers (a
	// stalled server), until the test ends.
	stalled atomic.Value // string
	release chan struct{}
}

func (r *restartable) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if m, _ := r.stalled.Load().(string); m != "" && req.Header.Get("Mcp-Method") == m {
		_, _ = io.Copy(io.Discard, req.Body) // (net/http notices a client's close once the body is read)
		select {
		case <-req.Context().Done():
		case <-r.release:
		}
		return
	}
	r.cur.Load().Handler().ServeHTTP(w, req)
}

// stall makes the upstream stall every later request of method.
func (r *restartable) stall(method string) { r.stalled.Store(method) }

// restart replaces the server by an empty one; the old one ends its
// notification streams (as a dying process's connections end).
func (r *restartable) restart() {
	old := r.cur.Swap(demo.New(r.opts))
	old.Close()
}

// server is the running server (the one a task of the test lives on).
func (r *restartable) server() *demo.Server { return r.cur.Load() }

func startRestartable(t *testing.T, opts demo.Options) *restartable {
	t.Helper()
	opts.Clock = demo.NewFakeClock(t0)
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	r := &restartable{opts: opts, release: make(chan struct{})}
	r.cur.Store(demo.New(opts))
	rec := &recorder{next: r, hits: make(chan string, 256), served: make(chan string, 256)}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rec)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		r.cur.Load().Close()
		hs.Close()
	})
	t.Cleanup(func() { close(r.release) }) // before hs.Close, which waits for stalled requests
	r.upEnv = &upEnv{url: hs.URL + "/mcp", rec: rec, hs: hs}
	t.Cleanup(func() { checkUpstreamRequests(t, rec.all()) })
	return r
}

// lossyStore loses the durable write of a task's end (a store that failed
// at that moment): the record stays working although the watcher saw the
// end. Every other operation goes through.
type lossyStore struct {
	sessionmap.Store
	lose atomic.Bool
}

func (l *lossyStore) UpdateStatus(ctx context.Context, sc sessionmap.Scope, id string, sn sessionmap.Snapshot) (sessionmap.Task, error) {
	if l.lose.Load() && sn.Status.Terminal() {
		return sessionmap.Task{}, errors.New("lossy store: the write was lost")
	}
	return l.Store.UpdateStatus(ctx, sc, id, sn)
}

// Every wait ends when its task is terminal, by whichever route the end
// arrives (L-42, L-64, M-24, M-27, M-33): a completion pushed by the
// upstream (notifications/tasks), one polled, an upstream that restarted
// empty and no longer knows the task (with and without the bridge's store
// recording that end), and the record's own ttl running out while nothing
// comes from the upstream. Each route is taken by the blocking wait and by
// the parked HTTP/1 wait, for tasks/result opened before and after the task
// became terminal, and for a plain tools/call the upstream made a task of.
//
// Before the one wait rule (waitrule.go), a wait that saw "the upstream no
// longer knows this task" kept waiting for a record write that, when late
// or lost, never came: the parked and blocking waits of the "gone" routes
// hung until the client gave up, and so did the waits on a pushed task whose
// record expired.
func TestWaitEndsWhenTaskTerminal(t *testing.T) {
	type route struct {
		name      string
		push      bool  // the upstream pushes notifications/tasks (the watcher polls hourly)
		lose      bool  // the store loses the write of the task's end
		ttl       int64 // the task's ttl (ms, 0: the upstream's hour)
		end       func(t *testing.T, up *restartable, upID string)
		check     func(t *testing.T, r *reply)
		plainWait bool // a plain tools/call can wait on this route
	}
	complete := func(t *testing.T, up *restartable, upID string) {
		if !up.server().CompleteNow(upID) {
			t.Fatalf("the upstream does not know task %s", upID)
		}
	}
	restart := func(t *testing.T, up *restartable, _ string) { up.restart() }
	isResult := func(t *testing.T, r *reply) {
		t.Helper()
		if r.Err != nil || !strings.Contains(string(r.Result), "waited") {
			t.Fatalf("want the task's result: %s", r.Envelope)
		}
	}
	isGone := func(t *testing.T, r *reply) {
		t.Helper()
		if r.Err == nil || r.Err.Code != rpc.CodeInternalError || !strings.Contains(r.Err.Message, "no longer knows this task") {
			t.Fatalf("want -32603 saying the upstream no longer knows the task: %s", r.Envelope)
		}
	}
	isExpired := func(t *testing.T, r *reply) {
		t.Helper()
		if r.Err == nil || r.Err.Code != rpc.CodeInvalidParams {
			t.Fatalf("want -32602 for a task whose ttl ran out (L-65): %s", r.Envelope)
		}
	}
	routes := []route{
		{name: "pushed", push: true, end: complete, check: isResult, plainWait: true},
		{name: "polled", end: complete, check: isResult, plainWait: true},
		{name: "gone", push: true, end: restart, check: isGone, plainWait: true},
		{name: "gone-polled", end: restart, check: isGone, plainWait: true},
		{name: "gone-unrecorded", push: true, lose: true, end: restart, check: isGone, plainWait: true},
		{name: "ttl", push: true, ttl: 2500, end: func(*testing.T, *restartable, string) {}, check: isExpired},
	}
	for _, rt := range routes {
		for _, kind := range []string{"blocking", "parked"} {
			for _, when := range []string{"before", "after", "plain"} {
				if when == "plain" && !rt.plainWait {
					continue
				}
				t.Run(rt.name+"/"+kind+"/"+when, func(t *testing.T) {
					t.Parallel()
					ctx := ctxT(t, 30*time.Second)
					up := startRestartable(t, demo.Options{DisablePush: !rt.push})
					st := &lossyStore{Store: sessionmap.NewMemory()}
					st.lose.Store(rt.lose)
					w := fastWatch()
					// Nothing but a push (or the route under test) tells
					// the watcher of a pushed task anything.
					w.PushPollInterval = time.Hour
					br := startBridge(t, up.upEnv, legacyface.Config{Store: st, Watch: w, DisableParkedWaits: kind == "blocking"})
					c := newRawClient(t, br.url)
					c.initialize(ctx, nil)
					args := map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 3600000, "text": "waited"}}

					got := make(chan *reply, 1)
					wait := func(method string, params any) {
						go func() {
							r, err := c.try(ctx, method, params)
							if err != nil {
								t.Errorf("%s: %v", method, err)
							}
							got <- r
						}()
					}
					inPlace := func() {
						t.Helper()
						if kind == "parked" {
							if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
								t.Fatal(err)
							}
						} else {
							c.awaitEvent(ctx, "comment") // the wait's primed stream
						}
					}
					answer := func() *reply {
						t.Helper()
						select {
						case r := <-got:
							if r == nil {
								t.FailNow()
							}
							return r
						case <-ctx.Done():
							t.Fatalf("the wait did not end after its task did (%s)", rt.name)
							return nil
						}
					}

					if when == "plain" {
						c.drainEvents()
						wait("tools/call", args)
						inPlace()
						ids := up.server().TaskIDs()
						if len(ids) != 1 {
							t.Fatalf("upstream tasks: %v", ids)
						}
						rt.end(t, up, ids[0])
						rt.check(t, answer())
						return
					}
					task := map[string]any{}
					if rt.ttl > 0 {
						task["ttl"] = rt.ttl
					}
					args["task"] = task
					id := taskIDOf(t, c.call(ctx, "tools/call", args))
					upID := upstreamTaskID(t, st.Store, id)
					// The watcher knows the task (and, on a pushed route,
					// listens for it) before it ends.
					if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
						t.Fatalf("tasks/get before the end: %s", s)
					}
					if rt.push {
						if err := awaitListening(ctx, up); err != nil {
							t.Fatal(err)
						}
					}
					if when == "before" {
						c.drainEvents()
						wait("tasks/result", map[string]any{"taskId": id})
						inPlace()
						rt.end(t, up, upID)
						rt.check(t, answer())
						return
					}
					rt.end(t, up, upID)
					awaitTerminal(t, ctx, c, id)
					c.drainEvents()
					wait("tasks/result", map[string]any{"taskId": id})
					rt.check(t, answer())
				})
			}
		}
	}
}

// awaitListening waits until the upstream has acknowledged a
// subscriptions/listen (the watcher gets the task's changes pushed).
func awaitListening(ctx context.Context, up *restartable) error {
	for up.server().LiveListens() == 0 {
		select {
		case <-ctx.Done():
			return errors.New("the watcher never listened for notifications/tasks")
		case <-up.rec.served:
		case <-up.rec.hits:
		}
	}
	return nil
}

// awaitTerminal polls tasks/get until the task is over for a client:
// terminal, or gone (-32602).
func awaitTerminal(t *testing.T, ctx context.Context, c *rawClient, id string) {
	t.Helper()
	for ctx.Err() == nil {
		r := c.call(ctx, "tasks/get", map[string]any{"taskId": id})
		if r.Err != nil {
			if r.Err.Code == rpc.CodeInvalidParams {
				return
			}
			t.Fatalf("tasks/get: %s", r.Envelope)
		}
		if s := statusOf(t, r); s != "working" && s != "input_required" {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond): // polling external state under the test's deadline
		}
	}
	t.Fatalf("task %s never ended", id)
}

// A stalled upstream does not stall tasks/get (M-24, M-33): a task whose
// state the bridge knows by push is answered from it at once while the
// upstream's tasks/get hangs. Before, tasks/get waited for the stalled read
// until the watcher's request timeout (here an hour, past the test's
// deadline; the upstream client has no bound of its own here).
func TestStalledUpstreamDoesNotStallTasksGet(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startRestartable(t, demo.Options{})
	w := fastWatch()
	w.RequestTimeout = time.Hour
	w.PushPollInterval = time.Hour
	clk := newManualClock() // the watcher's: the known state ages only when the test says
	w.Clock = clk
	client := modernup.NewHTTP(up.url, nil)
	client.Timeout = -1
	br := startBridge(t, up.upEnv, legacyface.Config{UpstreamClient: client, Watch: w})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task",
		"arguments": map[string]any{"ms": 3600000, "text": "pushed"}, "task": map[string]any{}}))
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
		t.Fatalf("tasks/get: %s", s)
	}
	if err := awaitListening(ctx, up); err != nil {
		t.Fatal(err)
	}
	up.stall("tasks/get")
	clk.Advance(time.Minute) // the known state is older than the task's poll interval
	for range 3 {
		if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
			t.Fatalf("tasks/get with the upstream's tasks/get stalled: %s", s)
		}
	}
}

// A stalled upstream is bounded by the bridge's upstream timeout: a
// tools/call the upstream never answers (plain or task-augmented) fails
// with a retryable -32603 naming the upstream's slowness, and a change the
// upstream pushes while its tasks/get stalls still reaches the open
// tasks/result and the next tasks/get (the watcher's stalled read gives up
// at the same bound). Before, tools/call waited as long as the client did.
func TestStalledUpstreamIsBounded(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startRestartable(t, demo.Options{})
	w := fastWatch()
	w.RequestTimeout = time.Hour
	w.PushPollInterval = time.Hour
	client := modernup.NewHTTP(up.url, nil)
	client.Timeout = 500 * time.Millisecond
	br := startBridge(t, up.upEnv, legacyface.Config{UpstreamClient: client, Watch: w})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task",
		"arguments": map[string]any{"ms": 3600000, "text": "pushed"}, "task": map[string]any{}}))
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
		t.Fatalf("tasks/get: %s", s)
	}
	if err := awaitListening(ctx, up); err != nil {
		t.Fatal(err)
	}
	up.stall("tasks/get")
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
	up.server().CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	if r := <-got; r == nil || r.Err != nil || !strings.Contains(string(r.Result), "pushed") {
		t.Fatalf("tasks/result after a pushed completion: %+v", r)
	}
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "completed" {
		t.Fatalf("tasks/get after a pushed completion: %s", s)
	}

	up.stall("tools/call")
	for _, task := range []any{nil, map[string]any{}} {
		args := map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}
		if task != nil {
			args["task"] = task
		}
		r := c.call(ctx, "tools/call", args)
		if r.Err == nil || r.Err.Code != rpc.CodeInternalError || !strings.Contains(r.Err.Message, "did not answer tools/call within 500ms") ||
			!strings.Contains(r.Err.Message, "try again") {
			t.Errorf("tools/call (task %v) on a stalled upstream: %s; want a retryable -32603 naming the upstream's slowness", task != nil, r.Envelope)
		}
	}
}
