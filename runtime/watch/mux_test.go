package watch

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/modern"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Shared listens (mux.go): the watchers of one upstream session share
// subscriptions/listen streams (M-33, M-47).

// sessionSource is upstream.TaskSource under a named upstream session.
type sessionSource struct {
	modernup.TaskSource
	session string
}

func (s sessionSource) PushSession() string { return s.session }

// muxFake is a fake upstream session: listens are recorded, and with hold
// each one waits for the test to release its acknowledgement.
type muxFake struct {
	*fakeSource
	session string
	calls   chan *muxCall

	mu     sync.Mutex
	hold   bool
	refuse map[string]bool
}

type muxCall struct {
	session string
	ids     []string
	feed    *feed
	release chan struct{}
}

func newMuxFake(f *fakeSource, session string) *muxFake {
	return &muxFake{fakeSource: f, session: session, calls: make(chan *muxCall, 64), refuse: map[string]bool{}}
}

func (p *muxFake) PushSession() string { return p.session }

func (p *muxFake) ListenTasks(ctx context.Context, ids []string) (<-chan *modern.DetailedTask, []string, error) {
	ch := make(chan *modern.DetailedTask, 8)
	fd := &feed{ch: ch}
	context.AfterFunc(ctx, fd.close)
	c := &muxCall{session: p.session, ids: slices.Sorted(slices.Values(ids)), feed: fd, release: make(chan struct{})}
	p.mu.Lock()
	hold := p.hold
	var acked []string
	for _, id := range ids {
		if !p.refuse[id] {
			acked = append(acked, id)
		}
	}
	p.mu.Unlock()
	p.calls <- c
	if hold {
		select {
		case <-c.release:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	return ch, acked, nil
}

// call receives the next listen (failsafe 10 s).
func (p *muxFake) call(t testing.TB) *muxCall {
	t.Helper()
	select {
	case c := <-p.calls:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no listen within 10s")
	}
	return nil
}

func (fd *feed) isClosed() bool {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	return fd.closed
}

// waitMux waits until cond holds on the multiplexer's state (failsafe 10 s).
func waitMux(t testing.TB, m *Manager, what string, cond func(mx *muxer) bool) {
	t.Helper()
	if !muxWithin(m, 10*time.Second, cond) {
		t.Fatalf("multiplexer: never %s", what)
	}
}

// muxWithin waits until cond holds for m's multiplexer (checked at each of
// its changes) or d of real time passed, and reports whether it holds.
func muxWithin(m *Manager, d time.Duration, cond func(mx *muxer) bool) bool {
	mx := m.mux
	timedOut := false
	stop := time.AfterFunc(d, func() {
		mx.mu.Lock()
		timedOut = true
		mx.changed.Broadcast()
		mx.mu.Unlock()
	})
	defer stop.Stop()
	mx.mu.Lock()
	defer mx.mu.Unlock()
	for !cond(mx) && !timedOut {
		mx.changed.Wait()
	}
	return cond(mx)
}

// waiting is the number of registrations not yet answered.
func waiting(mx *muxer) int {
	n := 0
	for _, g := range mx.groups {
		for _, sh := range g.shards {
			n += sh.waiting
		}
	}
	return n
}

func registered(mx *muxer) int {
	n := 0
	for _, g := range mx.groups {
		for _, sh := range g.shards {
			n += len(sh.subs)
		}
	}
	return n
}

func attachAll(t *testing.T, m *Manager, ids ...string) []*Subscription {
	t.Helper()
	subs := make([]*Subscription, len(ids))
	for i, id := range ids {
		s, err := m.Attach(context.Background(), key(id))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		subs[i] = s
	}
	return subs
}

// 100 watched tasks of one principal cost one listen stream upstream, not
// 100, counted at the embedded modern server; every completion is pushed.
func TestMuxHundredTasksOneListen(t *testing.T) {
	d := startDemo(t, demo.Options{})
	src := sessionSource{TaskSource: modernup.TaskSource{Client: d.client}, session: SessionOf("alice", "")}
	clk := newFakeClock()
	m := NewManager(Config{
		Source: func(Key) (Source, error) { return src, nil },
		Clock:  clk, ListenClock: clk, Jitter: -1, Logger: slog.New(slog.DiscardHandler),
	})
	t.Cleanup(m.Close)
	var subs []*Subscription
	var keys []Key
	for i := range 100 {
		k := d.task(t, "slow_task", map[string]any{"ms": 600_000, "text": fmt.Sprint(i)}, modernup.CallOptions{})
		s, err := m.Attach(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		subs, keys = append(subs, s), append(keys, k)
	}
	waitMux(t, m, "saw 100 registrations", func(mx *muxer) bool { return waiting(mx) == 100 })
	clk.Advance(DefaultListenCoalesce)
	for _, s := range subs {
		until(t, s, func(s Snapshot) bool { return s.Pushed }) // the current state, pushed on the shared listen
	}
	if c := d.srv.Counters(); c.ListenStreams != 1 {
		t.Fatalf("listen streams upstream = %d, want 1 for 100 tasks of one principal", c.ListenStreams)
	}
	if open, _ := m.Streams(); open != 1 {
		t.Fatalf("open streams = %d, want 1", open)
	}
	for _, k := range keys {
		d.srv.CompleteNow(k.TaskID)
	}
	for _, s := range subs {
		if snap := until(t, s, terminal); snap.Task.Status != modern.StatusCompleted {
			t.Fatalf("terminal %v", snap.Task.Status)
		}
	}
}

// A new task re-listens with the union of the ids; the old listen is read
// until the new one is acknowledged, and closed only then.
func TestMuxRelistenWithUnionClosesOldAfterAck(t *testing.T) {
	f := newFakeSource()
	f.set(task("A", modern.StatusWorking, 1000))
	f.set(task("B", modern.StatusWorking, 1000))
	p := newMuxFake(f, "p:alice")
	m, clk := newTestManager(t, p, func(c *Config) { c.PushPollInterval = -1 })
	a := attachAll(t, m, "A")[0]
	waitMux(t, m, "registered A", func(mx *muxer) bool { return waiting(mx) == 1 })
	clk.Advance(DefaultListenCoalesce)
	c1 := p.call(t)
	if !slices.Equal(c1.ids, []string{"A"}) {
		t.Fatalf("first listen %v", c1.ids)
	}
	waitMux(t, m, "acknowledged A", func(mx *muxer) bool { return waiting(mx) == 0 && mx.opened == 1 })

	p.mu.Lock()
	p.hold = true
	p.mu.Unlock()
	b := attachAll(t, m, "B")[0]
	waitMux(t, m, "registered B", func(mx *muxer) bool { return waiting(mx) == 1 })
	clk.Advance(DefaultListenCoalesce)
	c2 := p.call(t)
	if !slices.Equal(c2.ids, []string{"A", "B"}) {
		t.Fatalf("re-listen %v, want the union [A B]", c2.ids)
	}
	// Not acknowledged yet: the old listen is still open and still read.
	if c1.feed.isClosed() {
		t.Fatal("old listen closed before the new one was acknowledged")
	}
	c1.feed.send(task("A", modern.StatusInputRequired, 1000))
	if snap := until(t, a, func(s Snapshot) bool { return s.Pushed }); snap.Task.Status != modern.StatusInputRequired {
		t.Fatalf("A via the old listen: %v", snap.Task.Status)
	}
	close(c2.release)
	waitMux(t, m, "acknowledged the union", func(mx *muxer) bool { return mx.opened == 2 })
	for range c1.feed.ch { // ends once the old listen is closed
	}
	if !c1.feed.isClosed() {
		t.Fatal("old listen still open after the new one was acknowledged")
	}
	c2.feed.send(task("B", modern.StatusCompleted, 1000))
	c2.feed.send(task("A", modern.StatusCompleted, 1000))
	if snap := until(t, b, terminal); !snap.Pushed {
		t.Fatal("B's completion not pushed on the new listen")
	}
	if snap := until(t, a, terminal); !snap.Pushed {
		t.Fatal("A's completion not pushed on the new listen")
	}
	if open, opened := m.Streams(); opened != 2 || open > 1 {
		t.Fatalf("streams open %d, acknowledged %d; want ≤ 1 and 2", open, opened)
	}
}

// Ids the upstream left out of the acknowledgement (M-15) are polled at
// their pollIntervalMs (M-24); the others are pushed.
func TestMuxRefusedIDsArePolled(t *testing.T) {
	f := newFakeSource()
	f.set(task("A", modern.StatusWorking, 2000))
	f.set(task("B", modern.StatusWorking, 2000))
	p := newMuxFake(f, "p:alice")
	p.refuse["B"] = true
	m, clk := newTestManager(t, p, func(c *Config) { c.PushPollInterval = -1 })
	subs := attachAll(t, m, "A", "B")
	waitMux(t, m, "registered A and B", func(mx *muxer) bool { return waiting(mx) == 2 })
	clk.Advance(DefaultListenCoalesce)
	c := p.call(t)
	if !slices.Equal(c.ids, []string{"A", "B"}) {
		t.Fatalf("listen %v", c.ids)
	}
	waitMux(t, m, "answered both", func(mx *muxer) bool { return waiting(mx) == 0 && registered(mx) == 1 })
	// B: read once at start, once more at its poll interval.
	until(t, subs[1], seqAtLeast(1))
	before := f.getCount("B")
	clk.WaitPending(t, 2000*time.Millisecond-DefaultListenCoalesce)
	f.set(task("B", modern.StatusCompleted, 2000))
	clk.Advance(2 * time.Second)
	if snap := until(t, subs[1], terminal); snap.Pushed {
		t.Fatal("B's state pushed although the upstream refused to watch it")
	}
	if f.getCount("B") != before+1 {
		t.Fatalf("B polled %d times after its interval, want 1", f.getCount("B")-before)
	}
	c.feed.send(task("A", modern.StatusCompleted, 2000))
	if snap := until(t, subs[0], terminal); !snap.Pushed {
		t.Fatal("A not pushed")
	}
}

// Tasks of two principals never share a listen: each principal's stream is
// opened by its own source and carries only its own ids.
func TestMuxPrincipalsNeverShare(t *testing.T) {
	f := newFakeSource()
	for _, id := range []string{"A1", "A2", "B1"} {
		f.set(task(id, modern.StatusWorking, 1000))
	}
	alice, bob := newMuxFake(f, SessionOf("alice", "")), newMuxFake(f, SessionOf("bob", ""))
	alice.calls = bob.calls // one record of both
	m, clk := newTestManager(t, nil, func(c *Config) {
		c.Source = func(k Key) (Source, error) {
			if k.TaskID[0] == 'A' {
				return alice, nil
			}
			return bob, nil
		}
	})
	attachAll(t, m, "A1", "A2", "B1")
	waitMux(t, m, "registered 3", func(mx *muxer) bool { return waiting(mx) == 3 })
	clk.Advance(DefaultListenCoalesce)
	got := map[string][]string{}
	for range 2 {
		c := alice.call(t)
		got[c.session] = c.ids
	}
	if !slices.Equal(got[alice.session], []string{"A1", "A2"}) || !slices.Equal(got[bob.session], []string{"B1"}) {
		t.Fatalf("listens by session: %v", got)
	}
	waitMux(t, m, "acknowledged both", func(mx *muxer) bool { return mx.opened == 2 })
	if open, _ := m.Streams(); open != 2 {
		t.Fatalf("open streams %d, want 2 (one per principal)", open)
	}
	// Anonymous callers with different credentials are different sessions.
	if SessionOf("", "Bearer x") == SessionOf("", "Bearer y") || SessionOf("", "Bearer x") == SessionOf("x", "") {
		t.Fatal("anonymous sessions collide")
	}
}

// A listen that ends is replaced after backoff (M-14) while its tasks are
// polled; a completion during the gap is read by the poll, not lost.
func TestMuxStreamLossRelistensNoLostTerminal(t *testing.T) {
	f := newFakeSource()
	f.set(task("A", modern.StatusWorking, 5000))
	f.set(task("B", modern.StatusWorking, 5000))
	p := newMuxFake(f, "p:alice")
	m, clk := newTestManager(t, p, func(c *Config) { c.PushPollInterval = -1 })
	subs := attachAll(t, m, "A", "B")
	waitMux(t, m, "registered A and B", func(mx *muxer) bool { return waiting(mx) == 2 })
	clk.Advance(DefaultListenCoalesce)
	c1 := p.call(t)
	waitMux(t, m, "acknowledged", func(mx *muxer) bool { return mx.opened == 1 })
	for _, s := range subs {
		until(t, s, seqAtLeast(2)) // the read after the acknowledgement
	}

	// A completes while the stream breaks: nobody pushes it.
	f.set(task("A", modern.StatusCompleted, 5000))
	c1.feed.close()
	if snap := until(t, subs[0], terminal); snap.Pushed || snap.Task.Status != modern.StatusCompleted {
		t.Fatalf("A after the stream ended: %+v pushed=%v", snap.Task, snap.Pushed)
	}
	// B listens again after the backoff, alone (A is over).
	until(t, subs[1], seqAtLeast(3)) // B's poll after the stream ended
	// The poll's snapshot is published before the watcher arms (and may
	// re-arm) its timer for the listen's backoff, so one step of the clock
	// can come before the timer it should fire: step a second at a time
	// until B has registered again.
	clk.WaitPending(t, time.Second)
	for step := 0; ; step++ {
		clk.Advance(time.Second)
		if muxWithin(m, 500*time.Millisecond, func(mx *muxer) bool { return waiting(mx) == 1 }) {
			break
		}
		if step == 10 {
			t.Fatal("multiplexer: never B registered again")
		}
	}
	clk.Advance(DefaultListenCoalesce)
	c2 := p.call(t)
	if !slices.Equal(c2.ids, []string{"B"}) {
		t.Fatalf("re-listen %v, want [B]", c2.ids)
	}
	c2.feed.send(task("B", modern.StatusCompleted, 5000))
	if snap := until(t, subs[1], terminal); !snap.Pushed {
		t.Fatal("B not pushed on the new listen")
	}
}

// Shards bound a listen's size: 25 tasks with MaxStreamTasks 10 take 3
// listens of ≤ 10 ids, and one more task re-listens one shard only.
func TestMuxShardsBoundListenSize(t *testing.T) {
	f := newFakeSource()
	var ids []string
	for i := range 26 {
		id := fmt.Sprintf("T%02d", i)
		ids = append(ids, id)
		f.set(task(id, modern.StatusWorking, 1000))
	}
	p := newMuxFake(f, "p:alice")
	m, clk := newTestManager(t, p, func(c *Config) { c.MaxStreamTasks = 10; c.PushPollInterval = -1 })
	attachAll(t, m, ids[:25]...)
	waitMux(t, m, "registered 25", func(mx *muxer) bool { return waiting(mx) == 25 })
	clk.Advance(DefaultListenCoalesce)
	var all []string
	for range 3 {
		c := p.call(t)
		if len(c.ids) > 10 {
			t.Fatalf("a listen of %d ids, want ≤ 10", len(c.ids))
		}
		all = append(all, c.ids...)
	}
	slices.Sort(all)
	if !slices.Equal(all, ids[:25]) {
		t.Fatalf("ids listened %v", all)
	}
	waitMux(t, m, "acknowledged 3", func(mx *muxer) bool { return mx.opened == 3 && waiting(mx) == 0 })
	attachAll(t, m, ids[25])
	waitMux(t, m, "registered one more", func(mx *muxer) bool { return waiting(mx) == 1 })
	clk.Advance(DefaultListenCoalesce)
	c := p.call(t)
	if len(c.ids) != 6 || !slices.Contains(c.ids, ids[25]) {
		t.Fatalf("one more task re-listened %v, want the 5-id shard plus it", c.ids)
	}
	waitMux(t, m, "acknowledged 4", func(mx *muxer) bool { return mx.opened == 4 })
	if open, _ := m.Streams(); open != 3 {
		t.Fatalf("open streams %d, want 3", open)
	}
	select {
	case extra := <-p.calls:
		t.Fatalf("another listen %v", extra.ids)
	default:
	}
}

// The same state from the old and the new listen reaches the watcher once;
// dispatching allocates nothing.
func TestMuxDeduplicatesStates(t *testing.T) {
	mx := newMuxer(&Manager{})
	s := &muxSub{id: "A"}
	taken := func() *modern.DetailedTask {
		t, _, ok := mx.take(s)
		if !ok {
			return nil
		}
		return t
	}
	w := task("A", modern.StatusWorking, 0)
	w2 := *w
	mx.deliverLocked(s, w)
	if d := taken(); d != w {
		t.Fatalf("first state: %+v", d)
	}
	mx.deliverLocked(s, &w2)
	if d := taken(); d != nil {
		t.Fatalf("duplicate delivered: %+v", d)
	}
	ir := task("A", modern.StatusInputRequired, 0)
	ir.LastUpdatedAt = "2026-08-01T12:00:01Z"
	mx.deliverLocked(s, ir)
	if d := taken(); d == nil || d.Status != modern.StatusInputRequired {
		t.Fatalf("new state %+v", d)
	}
	allocs := testing.AllocsPerRun(100, func() {
		mx.deliverLocked(s, w)
		mx.deliverLocked(s, ir)
	})
	if allocs > 0 {
		t.Fatalf("dispatch allocates %.1f per state", allocs)
	}
}

// A larger shard re-listens less often: 250 ids wait 3 × ListenCoalesce, so
// a shard re-sends at most 100 ids per ListenCoalesce however fast tasks
// arrive.
func TestMuxCoalesceGrowsWithShard(t *testing.T) {
	f := newFakeSource()
	var ids []string
	for i := range 250 {
		id := fmt.Sprintf("T%03d", i)
		ids = append(ids, id)
		f.set(task(id, modern.StatusWorking, 1000))
	}
	p := newMuxFake(f, "p:alice")
	m, clk := newTestManager(t, p, func(c *Config) { c.PushPollInterval = -1 })
	attachAll(t, m, ids...)
	waitMux(t, m, "registered 250", func(mx *muxer) bool { return waiting(mx) == 250 })
	clk.WaitPending(t, 3*DefaultListenCoalesce)
	clk.Advance(3 * DefaultListenCoalesce)
	if c := p.call(t); len(c.ids) != 250 {
		t.Fatalf("listen of %d ids, want 250", len(c.ids))
	}
	waitMux(t, m, "acknowledged", func(mx *muxer) bool { return mx.opened == 1 && waiting(mx) == 0 })
}

// gatedSource holds every tasks/get until released and records how many
// were in flight at once.
type gatedSource struct {
	*fakeSource
	release chan struct{}
	entered chan struct{}

	mu          sync.Mutex
	inFlight    int
	maxInFlight int
}

func (g *gatedSource) GetTask(ctx context.Context, id string) (*modern.DetailedTask, error) {
	g.mu.Lock()
	g.inFlight++
	g.maxInFlight = max(g.maxInFlight, g.inFlight)
	g.mu.Unlock()
	g.entered <- struct{}{}
	<-g.release
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	return g.fakeSource.GetTask(ctx, id)
}

// Scheduled reads are bounded by MaxConcurrentReads: 6 watchers starting
// together keep at most 2 tasks/get in flight, and every one reads.
func TestWatcherReadsBounded(t *testing.T) {
	f := newFakeSource()
	g := &gatedSource{fakeSource: f, release: make(chan struct{}), entered: make(chan struct{}, 16)}
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("T%d", i)
		ids = append(ids, id)
		f.set(task(id, modern.StatusWorking, 1000))
	}
	m, _ := newTestManager(t, g, func(c *Config) { c.MaxConcurrentReads = 2 })
	subs := attachAll(t, m, ids...)
	for range 6 {
		<-g.entered // at most 2 can be here before one is released
		g.release <- struct{}{}
	}
	for _, s := range subs {
		until(t, s, seqAtLeast(1))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.maxInFlight > 2 {
		t.Fatalf("%d tasks/get in flight at once, want ≤ 2", g.maxInFlight)
	}
}
