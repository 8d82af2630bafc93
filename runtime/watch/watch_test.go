package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

const target = "http://127.0.0.1:1/mcp"

func key(id string) Key { return Key{Target: target, TaskID: id} }

func newTestManager(t *testing.T, src Source, mutate func(*Config)) (*Manager, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	cfg := Config{
		Source:      func(Key) (Source, error) { return src, nil },
		Clock:       clk,
		ListenClock: clk, // shared listens coalesce on the test's time too
		Jitter:      -1,  // exact delays, so tests can assert them
		Logger:      slog.New(slog.DiscardHandler),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	m := NewManager(cfg)
	t.Cleanup(m.Close)
	return m, clk
}

// next receives the next snapshot (failsafe: 10 s of real time).
func next(t testing.TB, s *Subscription) Snapshot {
	t.Helper()
	select {
	case snap, ok := <-s.C:
		if !ok {
			t.Fatalf("subscription closed")
		}
		return snap
	case <-time.After(10 * time.Second):
		t.Fatalf("no snapshot within 10s")
	}
	return Snapshot{}
}

// until receives snapshots until one satisfies ok.
func until(t testing.TB, s *Subscription, ok func(Snapshot) bool) Snapshot {
	t.Helper()
	for {
		if snap := next(t, s); ok(snap) {
			return snap
		}
	}
}

func seqAtLeast(n uint64) func(Snapshot) bool { return func(s Snapshot) bool { return s.Seq >= n } }

func terminal(s Snapshot) bool { return s.Terminal() }

// waitGets waits until the fake upstream has served n more tasks/get.
func waitGets(t testing.TB, f *fakeSource, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-f.got:
		case <-time.After(10 * time.Second):
			t.Fatalf("tasks/get %d of %d did not happen", i+1, n)
		}
	}
}

// One watcher per upstream task: N waiters cost exactly one upstream poll stream.
func TestManyWaitersOnePollStream(t *testing.T) {
	run := func(n int) int {
		src := newFakeSource()
		src.set(task("T", modern.StatusWorking, 1000))
		m, clk := newTestManager(t, src, nil)
		subs := make([]*Subscription, n)
		for i := range subs {
			s, err := m.Attach(context.Background(), key("T"))
			if err != nil {
				t.Fatal(err)
			}
			subs[i] = s
		}
		if got := m.Watching(); got != 1 {
			t.Fatalf("%d waiters: %d watchers, want 1", n, got)
		}
		for _, s := range subs {
			until(t, s, seqAtLeast(1))
		}
		for round := uint64(2); round <= 6; round++ {
			clk.BlockUntil(t, 1)
			clk.Advance(time.Second)
			for _, s := range subs {
				until(t, s, seqAtLeast(round))
			}
		}
		src.set(task("T", modern.StatusCompleted, 1000))
		clk.BlockUntil(t, 1)
		clk.Advance(time.Second)
		for _, s := range subs {
			snap := until(t, s, terminal)
			if snap.Task.Status != modern.StatusCompleted || string(snap.Task.Result) == "" {
				t.Fatalf("terminal snapshot = %+v", snap.Task)
			}
		}
		if got := m.Watching(); got != 0 {
			t.Errorf("watchers after terminal = %d, want 0 (M-25)", got)
		}
		for _, s := range subs {
			s.Close()
		}
		return src.getCount("T")
	}
	one, many := run(1), run(100)
	if one != 7 {
		t.Errorf("single waiter: %d tasks/get, want 7 (first read, 5 polls, terminal)", one)
	}
	if many != one {
		t.Errorf("100 waiters: %d tasks/get, single waiter: %d; want equal (one watcher per upstream task)", many, one)
	}
}

// M-24: pollIntervalMs is respected, defaulted when absent or ≤ 0 and clamped.
func TestM24_PollIntervalDefaultAndClamp(t *testing.T) {
	for _, tc := range []struct {
		pollMs int64 // 0 = absent
		want   time.Duration
	}{
		{0, time.Second},                  // absent → default
		{-5, time.Second},                 // negative → default
		{250, 250 * time.Millisecond},     // respected
		{1, 100 * time.Millisecond},       // below min → min
		{3_600_000, 30 * time.Second},     // above max → max
		{1_500, 1_500 * time.Millisecond}, // respected
	} {
		t.Run(fmt.Sprint(tc.pollMs), func(t *testing.T) {
			src := newFakeSource()
			d := task("T", modern.StatusWorking, 0)
			if tc.pollMs != 0 {
				d.PollIntervalMs = modern.Int64(tc.pollMs)
			}
			src.set(d)
			m, clk := newTestManager(t, src, nil)
			s, err := m.Attach(context.Background(), key("T"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			until(t, s, seqAtLeast(1))
			clk.BlockUntil(t, 1)
			if got := clk.pending(); len(got) != 1 || got[0] != tc.want {
				t.Fatalf("next poll in %v, want [%v]", got, tc.want)
			}
		})
	}
}

func TestJitterSpreadsRetriesNotPolls(t *testing.T) {
	src := newFakeSource()
	src.set(task("T", modern.StatusWorking, 1000))
	m, clk := newTestManager(t, src, func(c *Config) {
		c.Jitter = 0.1
		c.Rand = func() float64 { return 1 } // upper edge: +10 %
	})
	// Retries after errors are spread ±Jitter.
	if got := m.jitter(2 * time.Second); got != 2200*time.Millisecond {
		t.Fatalf("jittered backoff = %v, want 2.2s", got)
	}
	// The regular cadence is exactly the task's pollInterval (M-24).
	s, _ := m.Attach(context.Background(), key("T"))
	defer s.Close()
	until(t, s, seqAtLeast(1))
	clk.BlockUntil(t, 1)
	if got := clk.pending(); len(got) != 1 || got[0] != 1000*time.Millisecond {
		t.Fatalf("poll delay = %v, want exactly 1s", got)
	}
}

// Upstream outage: the record stays, errors back off exponentially up to the
// cap, and polling resumes at the task's interval after recovery.
func TestOutageBackoffAndRecovery(t *testing.T) {
	src := newFakeSource()
	src.set(task("T", modern.StatusWorking, 1000))
	m, clk := newTestManager(t, src, func(c *Config) { c.MaxBackoff = 5 * time.Second })
	s, _ := m.Attach(context.Background(), key("T"))
	defer s.Close()
	first := until(t, s, seqAtLeast(1))
	if first.Task == nil || first.Err != nil {
		t.Fatalf("first snapshot = %+v", first)
	}

	src.mu.Lock()
	src.getErr = unavailable()
	src.mu.Unlock()
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	delay := time.Second // the pending poll
	for i, w := range want {
		clk.BlockUntil(t, 1)
		clk.Advance(delay)
		snap := until(t, s, seqAtLeast(uint64(i+2)))
		if snap.Err == nil || rpc.CodeOf(snap.Err) != rpc.CodeInternalError {
			t.Fatalf("attempt %d: Err = %v, want the -32603 outage", i, snap.Err)
		}
		if snap.Task == nil || snap.Task.Status != modern.StatusWorking || snap.Terminal() {
			t.Fatalf("attempt %d: the last good state must stay (got %+v)", i, snap.Task)
		}
		clk.BlockUntil(t, 1)
		if got := clk.pending(); len(got) != 1 || got[0] != w {
			t.Fatalf("backoff after error %d = %v, want %v", i+1, got, w)
		}
		delay = w
	}

	src.mu.Lock()
	src.getErr = nil
	src.mu.Unlock()
	clk.Advance(delay)
	snap := until(t, s, func(s Snapshot) bool { return s.Err == nil })
	if snap.Task == nil {
		t.Fatal("recovered snapshot has no task")
	}
	clk.BlockUntil(t, 1)
	if got := clk.pending(); len(got) != 1 || got[0] != time.Second {
		t.Fatalf("after recovery next poll in %v, want 1s", got)
	}
}

// M-27: -32602 from tasks/get means the task is gone: a terminal snapshot.
func TestM27_GoneIsTerminal(t *testing.T) {
	src := newFakeSource() // knows no task: every get is -32602
	var sunk []Snapshot
	var mu sync.Mutex
	m, _ := newTestManager(t, src, func(c *Config) {
		c.Sink = SinkFunc(func(_ context.Context, _ Key, s Snapshot) error {
			mu.Lock()
			sunk = append(sunk, s)
			mu.Unlock()
			return nil
		})
	})
	s, _ := m.Attach(context.Background(), key("gone"))
	defer s.Close()
	snap := until(t, s, terminal)
	if snap.Gone == nil || snap.Gone.Code != rpc.CodeInvalidParams {
		t.Fatalf("Gone = %v, want the upstream -32602", snap.Gone)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sunk) != 1 || sunk[0].Gone == nil {
		t.Fatalf("sink saw %+v, want the gone snapshot", sunk)
	}
}

// A transport error that unwraps to -32603 first is never "gone", even when a
// -32602 is further down its chain.
func TestTransportErrorIsNotGone(t *testing.T) {
	inner := rpc.Errorf(rpc.CodeInvalidParams, "x")
	err := fmt.Errorf("wrapped: %w", &tempErr{rpc.Errorf(rpc.CodeInternalError, "down: %v", inner)})
	if goneError(err) != nil {
		t.Fatal("a -32603 transport error was taken for gone")
	}
	if goneError(rpc.Errorf(rpc.CodeInvalidParams, "Task not found")) == nil {
		t.Fatal("-32602 not recognised as gone")
	}
}

// L-48, L-86: one waiter giving up ends only its subscription.
func TestCancelOneWaiter(t *testing.T) {
	src := newFakeSource()
	src.set(task("T", modern.StatusWorking, 1000))
	m, clk := newTestManager(t, src, nil)
	ctxA, cancelA := context.WithCancel(context.Background())
	a, _ := m.Attach(ctxA, key("T"))
	b, _ := m.Attach(context.Background(), key("T"))
	defer b.Close()
	until(t, a, seqAtLeast(1))
	until(t, b, seqAtLeast(1))

	cancelA()
	for range a.C { // drains, then ends: the channel closes
	}
	if m.Watching() != 1 {
		t.Fatalf("watchers = %d after one waiter left, want 1", m.Watching())
	}
	src.set(task("T", modern.StatusCompleted, 1000))
	clk.BlockUntil(t, 1)
	clk.Advance(time.Second)
	if snap := until(t, b, terminal); snap.Task.Status != modern.StatusCompleted {
		t.Fatalf("other waiter got %v", snap.Task.Status)
	}
}

// The last detach leaves the watcher running for IdleTimeout, then it stops.
func TestIdleWatcherStops(t *testing.T) {
	src := newFakeSource()
	src.set(task("T", modern.StatusWorking, 1000))
	m, clk := newTestManager(t, src, func(c *Config) { c.IdleTimeout = 3 * time.Second })
	s, _ := m.Attach(context.Background(), key("T"))
	until(t, s, seqAtLeast(1))
	waitGets(t, src, 1)
	s.Close()

	// Idle but within IdleTimeout: still polling.
	clk.BlockUntil(t, 1)
	clk.Advance(time.Second)
	waitGets(t, src, 1)
	if m.Watching() != 1 {
		t.Fatal("watcher stopped before IdleTimeout")
	}
	// Past IdleTimeout (3 s after the detach at T0): stops, no further reads.
	clk.BlockUntil(t, 1)
	clk.Advance(time.Second) // T2: one more read
	waitGets(t, src, 1)
	clk.BlockUntil(t, 1)
	clk.Advance(time.Second) // T3: idle deadline
	m.wg.Wait()              // the only watcher exits
	if m.Watching() != 0 {
		t.Fatal("watcher still registered after IdleTimeout")
	}
	before := src.getCount("T")
	if before != 3 {
		t.Errorf("tasks/get = %d before retiring, want 3 (T0, T1, T2)", before)
	}
	clk.Advance(time.Minute)
	if after := src.getCount("T"); after != before {
		t.Fatalf("tasks/get after the watcher stopped: %d → %d", before, after)
	}
	// A new waiter starts a fresh watcher (lazy restart).
	s2, _ := m.Attach(context.Background(), key("T"))
	defer s2.Close()
	until(t, s2, func(s Snapshot) bool { return s.Seq > 0 && s.Task != nil })
	if m.Watching() != 1 {
		t.Fatalf("watchers = %d, want 1", m.Watching())
	}
}

// Get serves the cache while it is younger than the poll
// interval and refreshes once when older; concurrent Gets share the refresh.
func TestGetServesCacheWithinPollInterval(t *testing.T) {
	src := newFakeSource()
	src.set(task("T", modern.StatusWorking, 5000))
	m, clk := newTestManager(t, src, nil)
	ctx := context.Background()

	s1, err := m.Get(ctx, key("T"), 0) // no watcher yet: starts one, first read
	if err != nil || s1.Task == nil {
		t.Fatalf("Get = %+v, %v", s1, err)
	}
	waitGets(t, src, 1)
	clk.BlockUntil(t, 1) // the watcher (idle now) waits for its next tick
	clk.Advance(2 * time.Second)
	for i := 0; i < 5; i++ {
		s, err := m.Get(ctx, key("T"), 0)
		if err != nil || s.Seq != s1.Seq {
			t.Fatalf("fresh Get %d = seq %d, %v; want cached seq %d", i, s.Seq, err, s1.Seq)
		}
	}
	if n := src.getCount("T"); n != 1 {
		t.Fatalf("tasks/get = %d with a fresh cache, want 1", n)
	}

	// Older than maxAge: one refresh for several concurrent Gets.
	src.mu.Lock()
	src.getErr = nil
	src.mu.Unlock()
	var wg sync.WaitGroup
	results := make([]Snapshot, 5)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i], _ = m.Get(ctx, key("T"), time.Second)
		}(i)
	}
	wg.Wait()
	for i, r := range results {
		if r.Seq <= s1.Seq {
			t.Errorf("stale Get %d returned seq %d, want > %d", i, r.Seq, s1.Seq)
		}
	}
	if n := src.getCount("T"); n > 3 {
		t.Errorf("tasks/get = %d for 5 concurrent stale Gets, want them to share refreshes", n)
	}
}

// Get with no state at all and an unreachable upstream returns the error.
func TestGetErrorWithoutState(t *testing.T) {
	src := newFakeSource()
	src.getErr = unavailable()
	m, _ := newTestManager(t, src, nil)
	_, err := m.Get(context.Background(), key("T"), 0)
	if err == nil || !Temporary(err) || rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Fatalf("Get err = %v, want the retryable -32603", err)
	}
}

// M-28, M-30: Answer retries tasks/update on retryable errors until acked,
// with the same keys, and returns a non-retryable error at once.
func TestM28_AnswerRetriesUntilAcked(t *testing.T) {
	src := newFakeSource()
	src.set(task("T", modern.StatusInputRequired, 1000))
	src.updErrs = []error{unavailable(), unavailable()}
	m, clk := newTestManager(t, src, nil)
	resp := modern.InputResponses{"k1": json.RawMessage(`{"action":"accept","content":{"answer":"42"}}`)}

	done := make(chan error, 1)
	go func() { done <- m.Answer(context.Background(), key("T"), resp) }()
	clk.BlockUntil(t, 1)
	clk.Advance(time.Second)
	clk.BlockUntil(t, 1)
	clk.Advance(2 * time.Second)
	if err := <-done; err != nil {
		t.Fatalf("Answer = %v", err)
	}
	src.mu.Lock()
	n := len(src.updates)
	for _, u := range src.updates {
		if !slices.Equal(u.Keys(), []string{"k1"}) {
			t.Errorf("update keys = %v", u.Keys())
		}
	}
	src.mu.Unlock()
	if n != 3 {
		t.Fatalf("tasks/update sent %d times, want 3 (two failures, one ack)", n)
	}

	src.updErrs = []error{rpc.Errorf(rpc.CodeInvalidParams, "Task not found")}
	if err := m.Answer(context.Background(), key("T"), resp); rpc.CodeOf(err) != rpc.CodeInvalidParams {
		t.Fatalf("non-retryable Answer = %v, want -32602 at once", err)
	}
}

// After an acknowledged tasks/update the watcher reads the task at once.
func TestAnswerRefreshesWatcher(t *testing.T) {
	src := newFakeSource()
	src.set(task("T", modern.StatusInputRequired, 10_000))
	m, _ := newTestManager(t, src, nil)
	s, _ := m.Attach(context.Background(), key("T"))
	defer s.Close()
	until(t, s, seqAtLeast(1))
	src.set(task("T", modern.StatusCompleted, 10_000))
	if err := m.Answer(context.Background(), key("T"), modern.InputResponses{"k": json.RawMessage(`{"action":"accept"}`)}); err != nil {
		t.Fatal(err)
	}
	if snap := until(t, s, terminal); snap.Task.Status != modern.StatusCompleted {
		t.Fatalf("status %v", snap.Task.Status)
	}
}

// Push path (M-33): notifications replace polling (safety polls only); a
// stream that ends triggers a poll and a re-listen (M-14).
func TestM33_PushThenRelisten(t *testing.T) {
	f := newFakeSource()
	f.ackAll = true
	f.set(task("T", modern.StatusWorking, 1000))
	m, clk := newTestManager(t, pushSource{f}, func(c *Config) { c.PushPollInterval = time.Minute })
	s, _ := m.Attach(context.Background(), key("T"))
	defer s.Close()

	<-f.listened
	// First read, then the read that closes the gap after the acknowledgement.
	waitGets(t, f, 2)
	until(t, s, seqAtLeast(2))
	clk.BlockUntil(t, 1)
	if got := clk.pending(); len(got) != 1 || got[0] != time.Minute {
		t.Fatalf("with push, next poll in %v, want the 1m safety interval", got)
	}

	wi := task("T", modern.StatusInputRequired, 1000)
	f.feed().send(wi)
	snap := until(t, s, func(s Snapshot) bool { return s.Pushed })
	if snap.Task.Status != modern.StatusInputRequired {
		t.Fatalf("pushed status %v", snap.Task.Status)
	}

	// The stream breaks: an immediate poll, then a new listen after backoff.
	f.feed().close()
	waitGets(t, f, 1)
	clk.BlockUntil(t, 1)
	clk.Advance(time.Second) // listen backoff = DefaultPollInterval
	<-f.listened
	f.mu.Lock()
	listens := f.listens
	f.mu.Unlock()
	if listens != 2 {
		t.Fatalf("listens = %d, want 2 (re-listen after the stream ended, M-14)", listens)
	}
	f.feed().send(task("T", modern.StatusCompleted, 1000))
	if snap := until(t, s, terminal); !snap.Pushed || snap.Task.Status != modern.StatusCompleted {
		t.Fatalf("terminal snapshot %+v pushed=%v", snap.Task, snap.Pushed)
	}
}

// An upstream that acknowledges without the task id, or refuses listen, is
// polled; no further listens are attempted.
func TestPushUnsupportedFallsBackToPolling(t *testing.T) {
	for name, setup := range map[string]func(*fakeSource){
		"not acknowledged": func(f *fakeSource) { f.ackAll = false },
		"method not found": func(f *fakeSource) { f.listenErr = rpc.Errorf(rpc.CodeMethodNotFound, "Method not found") },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeSource()
			setup(f)
			f.set(task("T", modern.StatusWorking, 1000))
			m, clk := newTestManager(t, pushSource{f}, nil)
			s, _ := m.Attach(context.Background(), key("T"))
			defer s.Close()
			<-f.listened
			until(t, s, seqAtLeast(1))
			for i := 2; i < 5; i++ {
				clk.BlockUntil(t, 1)
				clk.Advance(time.Second)
				until(t, s, seqAtLeast(uint64(i)))
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.listens != 1 {
				t.Fatalf("listens = %d, want 1", f.listens)
			}
		})
	}
}

// The sink sees a snapshot before any subscriber does (durable first).
func TestSinkBeforeSubscribers(t *testing.T) {
	src := newFakeSource()
	src.set(task("T", modern.StatusWorking, 1000))
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	m, _ := newTestManager(t, src, func(c *Config) {
		c.Sink = SinkFunc(func(context.Context, Key, Snapshot) error {
			entered <- struct{}{}
			<-release
			return errors.New("disk full") // logged; delivery goes on
		})
	})
	s, _ := m.Attach(context.Background(), key("T"))
	defer s.Close()
	<-entered
	select {
	case snap := <-s.C:
		t.Fatalf("subscriber saw %+v before the sink returned", snap)
	default:
	}
	close(release)
	if snap := next(t, s); snap.Task == nil {
		t.Fatal("no task after the sink")
	}
}

// A watcher that cannot resolve its upstream reports it to Attach.
func TestAttachSourceError(t *testing.T) {
	m := NewManager(Config{Source: func(Key) (Source, error) { return nil, errNonRetryable }})
	defer m.Close()
	if _, err := m.Attach(context.Background(), key("T")); !errors.Is(err, errNonRetryable) {
		t.Fatalf("Attach = %v", err)
	}
	if m.Watching() != 0 {
		t.Fatal("a watcher runs without a source")
	}
	if _, err := m.Attach(context.Background(), Key{Target: target}); rpc.CodeOf(err) != rpc.CodeInvalidParams {
		t.Fatalf("empty id: %v", err)
	}
}

// Close ends every subscription.
func TestManagerCloseEndsSubscriptions(t *testing.T) {
	src := newFakeSource()
	src.set(task("T", modern.StatusWorking, 1000))
	m, _ := newTestManager(t, src, nil)
	s, _ := m.Attach(context.Background(), key("T"))
	m.Close()
	for range s.C {
	}
	if _, err := m.Attach(context.Background(), key("T")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Attach after Close = %v", err)
	}
}

// A listen that fails for a retryable reason (upstream briefly down) is tried
// again after backoff, while polling carries on (M-14).
func TestListenRetriedAfterTemporaryFailure(t *testing.T) {
	f := newFakeSource()
	f.ackAll = true
	f.listenErr = unavailable()
	f.set(task("T", modern.StatusWorking, 5000))
	m, clk := newTestManager(t, pushSource{f}, nil)
	s, _ := m.Attach(context.Background(), key("T"))
	defer s.Close()
	<-f.listened
	until(t, s, seqAtLeast(1))
	f.mu.Lock()
	f.listenErr = nil
	f.mu.Unlock()
	clk.WaitPending(t, time.Second) // the listen backoff wakes before the 5s poll
	clk.Advance(time.Second)
	<-f.listened
	f.feed().send(task("T", modern.StatusCompleted, 5000))
	if snap := until(t, s, terminal); !snap.Pushed {
		t.Fatal("completion not pushed after the re-listen")
	}
}
