package watch

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Integration: watchers over upstream/modern against the embedded modern
// server (internal/demo) on 127.0.0.1.

type demoUpstream struct {
	srv    *demo.Server
	clock  *demo.FakeClock
	client *modernup.Client
	url    string
}

func startDemo(t *testing.T, opts demo.Options) *demoUpstream {
	t.Helper()
	clk := demo.NewFakeClock(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC))
	opts.Clock = clk
	if opts.PollInterval == 0 {
		opts.PollInterval = 500 * time.Millisecond
	}
	s := demo.New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	url, stop, err := s.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("demo stop: %v", err)
		}
		cancel()
	})
	c := modernup.NewHTTP(url, nil)
	// Runs before stop: a connection dialled for a cancelled request would
	// otherwise sit unused, and http.Server.Shutdown waits 5 s for those.
	t.Cleanup(func() { _ = c.Close() })
	return &demoUpstream{srv: s, clock: clk, client: c, url: url}
}

func (d *demoUpstream) manager(t *testing.T, opts modernup.CallOptions, mutate func(*Config)) (*Manager, *fakeClock) {
	src := modernup.TaskSource{Client: d.client, Opts: opts}
	clk := newFakeClock()
	cfg := Config{
		Source: func(k Key) (Source, error) {
			if k.Target != d.url {
				return nil, errors.New("unknown upstream")
			}
			return src, nil
		},
		Clock:  clk,
		Jitter: -1,
		Logger: slog.New(slog.DiscardHandler),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	m := NewManager(cfg)
	t.Cleanup(m.Close)
	return m, clk
}

func (d *demoUpstream) task(t *testing.T, name string, args map[string]any, opts modernup.CallOptions) Key {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
	out, err := d.client.CallTool(context.Background(), b, opts)
	if err != nil || out.Task == nil {
		t.Fatalf("%s: %+v, %v", name, out, err)
	}
	return Key{Target: d.url, TaskID: out.Task.TaskID}
}

// Poll path: no push; the completion is read by tasks/get at the interval.
func TestDemoPollPath(t *testing.T) {
	d := startDemo(t, demo.Options{DisablePush: true})
	m, clk := d.manager(t, modernup.CallOptions{}, nil)
	k := d.task(t, "slow_task", map[string]any{"ms": 60_000, "text": "polled"}, modernup.CallOptions{})
	s, err := m.Attach(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if snap := until(t, s, seqAtLeast(1)); snap.Task.Status != modern.StatusWorking {
		t.Fatalf("first %v", snap.Task.Status)
	}
	clk.BlockUntil(t, 1)
	if got := clk.pending(); len(got) != 1 || got[0] != 500*time.Millisecond {
		t.Fatalf("next poll in %v, want the upstream's pollIntervalMs 500ms (M-24)", got)
	}
	d.srv.CompleteNow(k.TaskID)
	clk.Advance(500 * time.Millisecond)
	snap := until(t, s, terminal)
	if snap.Pushed || snap.Task.Status != modern.StatusCompleted || !strings.Contains(string(snap.Task.Result), "polled") {
		t.Fatalf("terminal %+v pushed=%v", snap.Task, snap.Pushed)
	}
	if n := d.srv.GetCount(k.TaskID); n != 2 {
		t.Fatalf("tasks/get = %d, want 2", n)
	}
}

// Push path: notifications/tasks deliver the completion; polling is only the
// first read and the one after the acknowledgement.
func TestDemoPushPath(t *testing.T) {
	d := startDemo(t, demo.Options{})
	m, _ := d.manager(t, modernup.CallOptions{}, nil)
	k := d.task(t, "slow_task", map[string]any{"ms": 60_000, "text": "pushed"}, modernup.CallOptions{})
	s, err := m.Attach(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	until(t, s, func(s Snapshot) bool { return s.Pushed }) // the stream is up
	d.srv.CompleteNow(k.TaskID)
	snap := until(t, s, terminal)
	if !snap.Pushed || snap.Task.Status != modern.StatusCompleted {
		t.Fatalf("terminal %+v pushed=%v", snap.Task, snap.Pushed)
	}
	if n := d.srv.GetCount(k.TaskID); n > 2 {
		t.Fatalf("tasks/get = %d with push, want ≤ 2", n)
	}
	if c := d.srv.Counters(); c.ListenStreams != 1 {
		t.Fatalf("listen streams = %d, want 1", c.ListenStreams)
	}
}

// docs/ARCHITECTURE.md, One watcher per upstream task, against the real
// upstream: 100 waiters cost the same tasks/get
// count as one (the demo counts them per task).
func TestDemo100WaitersOnePollStream(t *testing.T) {
	d := startDemo(t, demo.Options{DisablePush: true})
	run := func(n int) int {
		m, clk := d.manager(t, modernup.CallOptions{}, nil)
		k := d.task(t, "slow_task", map[string]any{"ms": 60_000, "text": "x"}, modernup.CallOptions{})
		subs := make([]*Subscription, n)
		for i := range subs {
			s, err := m.Attach(context.Background(), k)
			if err != nil {
				t.Fatal(err)
			}
			subs[i] = s
		}
		for round := uint64(1); round <= 4; round++ {
			for _, s := range subs {
				until(t, s, seqAtLeast(round))
			}
			clk.BlockUntil(t, 1)
			clk.Advance(500 * time.Millisecond)
		}
		for _, s := range subs {
			until(t, s, seqAtLeast(5)) // the fifth read is done before the task ends
		}
		d.srv.CompleteNow(k.TaskID)
		clk.BlockUntil(t, 1)
		clk.Advance(500 * time.Millisecond)
		for _, s := range subs {
			until(t, s, terminal)
			s.Close()
		}
		return d.srv.GetCount(k.TaskID)
	}
	one, many := run(1), run(100)
	if diff := many - one; diff < 0 || float64(diff) > 0.1*float64(one) {
		t.Fatalf("tasks/get: 1 waiter %d, 100 waiters %d (want within 10%%: one watcher per upstream task)", one, many)
	}
}

// elicit_task: the snapshot exposes inputRequests; Answer sends tasks/update
// and the watcher sees the completion (M-28).
func TestDemoInputRequiredAnswer(t *testing.T) {
	d := startDemo(t, demo.Options{DisablePush: true})
	opts := modernup.CallOptions{Capabilities: modern.ClientCapabilities{Elicitation: &modern.Object{}}}
	m, _ := d.manager(t, opts, nil)
	k := d.task(t, "elicit_task", map[string]any{"question": "colour?"}, opts)
	s, _ := m.Attach(context.Background(), k)
	defer s.Close()
	snap := until(t, s, func(s Snapshot) bool { return s.Task != nil && s.Task.Status == modern.StatusInputRequired })
	keys := snap.Task.InputRequests.Keys()
	if len(keys) != 1 {
		t.Fatalf("inputRequests %v", keys)
	}
	if err := m.Answer(context.Background(), k, modern.InputResponses{keys[0]: json.RawMessage(`{"action":"accept","content":{"answer":"blue"}}`)}); err != nil {
		t.Fatal(err)
	}
	done := until(t, s, terminal)
	if done.Task.Status != modern.StatusCompleted || !strings.Contains(string(done.Task.Result), "blue") {
		t.Fatalf("after answer %+v", done.Task)
	}
	if c := d.srv.Counters(); c.InputResponses != 1 || c.DuplicateKeys != 0 {
		t.Fatalf("counters %+v", c)
	}
}

// tasks/cancel upstream; the watcher reports cancelled and stops.
func TestDemoCancelled(t *testing.T) {
	d := startDemo(t, demo.Options{})
	m, _ := d.manager(t, modernup.CallOptions{}, nil)
	k := d.task(t, "slow_task", map[string]any{"ms": 60_000, "text": "x"}, modernup.CallOptions{})
	s, _ := m.Attach(context.Background(), k)
	defer s.Close()
	until(t, s, seqAtLeast(1))
	if err := d.client.CancelTask(context.Background(), k.TaskID, modernup.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	if snap := until(t, s, terminal); snap.Task.Status != modern.StatusCancelled {
		t.Fatalf("status %v", snap.Task.Status)
	}
}

// M-27: after the upstream's TTL the task is gone (-32602): terminal, and the
// sink is told.
func TestDemoExpiredTaskIsGone(t *testing.T) {
	d := startDemo(t, demo.Options{TTL: time.Minute, DisablePush: true})
	var mu sync.Mutex
	var gone []Key
	m, clk := d.manager(t, modernup.CallOptions{}, func(c *Config) {
		c.Sink = SinkFunc(func(_ context.Context, k Key, s Snapshot) error {
			if s.Gone != nil {
				mu.Lock()
				gone = append(gone, k)
				mu.Unlock()
			}
			return nil
		})
	})
	k := d.task(t, "slow_task", map[string]any{"ms": 600_000, "text": "x"}, modernup.CallOptions{})
	s, _ := m.Attach(context.Background(), k)
	defer s.Close()
	until(t, s, seqAtLeast(1))
	d.clock.Advance(2 * time.Minute)
	clk.BlockUntil(t, 1)
	clk.Advance(500 * time.Millisecond)
	snap := until(t, s, terminal)
	if snap.Gone == nil || snap.Gone.Code != rpc.CodeInvalidParams {
		t.Fatalf("snapshot %+v, want gone", snap)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gone) != 1 || gone[0] != k {
		t.Fatalf("sink saw gone for %v", gone)
	}
}

// Upstream down: -32603 naming the upstream, no state lost, backoff doubles.
func TestDemoUpstreamDownBackoff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	c := modernup.NewHTTP(url, nil)
	defer c.Close()
	src := modernup.TaskSource{Client: c}
	clk := newFakeClock()
	m := NewManager(Config{Source: func(Key) (Source, error) { return src, nil }, Clock: clk, Jitter: -1,
		DisablePush: true, Logger: slog.New(slog.DiscardHandler)})
	defer m.Close()
	s, _ := m.Attach(context.Background(), Key{Target: url, TaskID: "T"})
	defer s.Close()
	snap := until(t, s, seqAtLeast(1))
	e := rpc.As(snap.Err)
	if e == nil || e.Code != rpc.CodeInternalError || !strings.Contains(e.Message, url) || !errors.Is(snap.Err, modernup.ErrUnavailable) {
		t.Fatalf("Err = %v, want -32603 naming %s", snap.Err, url)
	}
	if snap.Terminal() {
		t.Fatal("an outage ended the watch")
	}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		clk.BlockUntil(t, 1)
		if got := clk.pending(); len(got) != 1 || got[0] != want {
			t.Fatalf("backoff %d = %v, want %v", i, got, want)
		}
		clk.Advance(want)
		until(t, s, seqAtLeast(uint64(i+2)))
	}
	if m.Watching() != 1 {
		t.Fatal("watcher gave up during the outage")
	}
}
