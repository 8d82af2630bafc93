package watch

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// parkSource is an upstream session whose tasks are all pushed: one shared
// listen acknowledges every id, and the test pushes states on it.
type parkSource struct {
	mu    sync.Mutex
	tasks map[string]*modern.DetailedTask
	gets  map[string]int
	feeds []*feed
}

func (p *parkSource) PushSession() string { return "p:alice" }

func (p *parkSource) GetTask(_ context.Context, id string) (*modern.DetailedTask, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gets[id]++
	t := p.tasks[id]
	if t == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "Failed to retrieve task: Task not found")
	}
	c := *t
	return &c, nil
}

func (p *parkSource) UpdateTask(context.Context, string, modern.InputResponses) error { return nil }

func (p *parkSource) ListenTasks(ctx context.Context, ids []string) (<-chan *modern.DetailedTask, []string, error) {
	ch := make(chan *modern.DetailedTask, 8)
	fd := &feed{ch: ch}
	context.AfterFunc(ctx, fd.close)
	p.mu.Lock()
	p.feeds = append(p.feeds, fd)
	p.mu.Unlock()
	return ch, ids, nil
}

func (p *parkSource) getCount(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gets[id]
}

// push sends t on the newest listen.
func (p *parkSource) push(t *modern.DetailedTask) {
	p.mu.Lock()
	fd := p.feeds[len(p.feeds)-1]
	p.mu.Unlock()
	fd.send(t)
}

// settledGoroutines returns the goroutines added since before, once at
// most limit remain or after a bound. A watcher counts as parked before the
// goroutine that parked it has returned; on two CPUs (and under -race) a
// burst of them can still be unwinding when the last one parks. Yielding
// lets them finish; a goroutine that stays blocked still counts.
func settledGoroutines(before, limit int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		extra := runtime.NumGoroutine() - before
		if extra <= limit || time.Now().After(deadline) {
			return extra
		}
		runtime.Gosched()
	}
}

func waitParked(t *testing.T, m *Manager, what string, cond func(int) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !m.WaitParked(ctx, cond) {
		t.Fatalf("parked watchers = %d: never %s", m.Parked(), what)
	}
}

// A watcher whose task is pushed on a shared stream and has no read due
// holds no goroutine: 1,000 watched tasks add well under 0.2 goroutines
// each (a goroutine per watcher would add 1,000). Every parked watcher still
// hears its task's end, a read asked for, and its last subscriber leaving.
func TestParkedWatchersHoldNoGoroutine(t *testing.T) {
	const n = 1000
	src := &parkSource{tasks: map[string]*modern.DetailedTask{}, gets: map[string]int{}}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("T%04d", i)
		src.set(task(ids[i], modern.StatusWorking, 1000))
	}
	m := NewManager(Config{
		Source: func(Key) (Source, error) { return src, nil },
		Jitter: -1, Logger: slog.New(slog.DiscardHandler),
		// A large window: no idle retirement and no safety read while the
		// test counts.
		IdleTimeout: time.Hour, PushPollInterval: time.Hour, ListenCoalesce: -1,
	})
	t.Cleanup(m.Close)
	before := runtime.NumGoroutine()
	subs := attachAll(t, m, ids...)
	waitParked(t, m, fmt.Sprintf("reached %d", n), func(k int) bool { return k == n })
	for i, s := range subs {
		if snap := until(t, s, func(s Snapshot) bool { return s.Task != nil }); snap.Task.Status != modern.StatusWorking {
			t.Fatalf("%s: %v", ids[i], snap.Task.Status)
		}
	}
	extra := settledGoroutines(before, n/5)
	if perWait := float64(extra) / n; perWait > 0.2 {
		t.Fatalf("%d parked watchers hold %d goroutines (%.2f each), want ≤ 0.2 each", n, extra, perWait)
	}

	// A read asked for wakes a parked watcher, which reads and parks again.
	k0 := key(ids[0])
	gets := src.getCount(ids[0])
	m.Refresh(k0)
	until(t, subs[0], func(s Snapshot) bool { return src.getCount(ids[0]) > gets })
	waitParked(t, m, "parked again after the read", func(k int) bool { return k == n })

	// The last subscriber leaving wakes the watcher (its idle deadline is
	// now scheduled); with a negative IdleTimeout it would retire at once.
	subs[1].Close()
	waitParked(t, m, "parked again after the subscriber left", func(k int) bool { return k == n })

	// Every task's end, pushed, reaches its waiter; the watchers end.
	for _, id := range ids[2:] {
		done := task(id, modern.StatusCompleted, 0)
		src.set(done)
		src.push(done)
	}
	for i, s := range subs[2:] {
		if snap := until(t, s, terminal); snap.Task.Status != modern.StatusCompleted || !snap.Pushed {
			t.Fatalf("%s: %v pushed=%v", ids[i+2], snap.Task.Status, snap.Pushed)
		}
	}
	waitParked(t, m, "dropped to 2", func(k int) bool { return k == 2 })
}

// Close ends parked watchers too (it waits for them).
func TestCloseEndsParkedWatchers(t *testing.T) {
	src := &parkSource{tasks: map[string]*modern.DetailedTask{}, gets: map[string]int{}}
	src.set(task("A", modern.StatusWorking, 1000))
	m := NewManager(Config{
		Source: func(Key) (Source, error) { return src, nil },
		Jitter: -1, Logger: slog.New(slog.DiscardHandler), PushPollInterval: time.Hour, ListenCoalesce: -1,
	})
	s, err := m.Attach(context.Background(), key("A"))
	if err != nil {
		t.Fatal(err)
	}
	waitParked(t, m, "reached 1", func(k int) bool { return k == 1 })
	m.Close()
	if _, ok := <-s.C; ok {
		for range s.C {
		}
	}
	if w := m.Watching(); w != 0 {
		t.Fatalf("watching after Close = %d", w)
	}
	if p := m.Parked(); p != 0 {
		t.Fatalf("parked after Close = %d", p)
	}
}

func (p *parkSource) set(t *modern.DetailedTask) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tasks[t.TaskID] = t
}

// queued is the number of live tickets waiting for a read token.
func (g *readGate) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, t := range g.q {
		if !t.cancelled && !t.granted {
			n++
		}
	}
	return n
}

// A burst of watchers starting together queues for the read tokens with no
// goroutine each: with 2 reads in flight (held upstream), the other 198
// watchers wait as queue entries, and all of them read once the upstream
// answers (a goroutine blocked on the token per watcher would add 400).
func TestQueuedReadsHoldNoGoroutine(t *testing.T) {
	const n = 200
	f := newFakeSource()
	f.got = make(chan string, 4*n)
	g := &gatedSource{fakeSource: f, release: make(chan struct{}), entered: make(chan struct{}, n)}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("T%03d", i)
		f.set(task(ids[i], modern.StatusWorking, 30_000))
	}
	m := NewManager(Config{
		Source: func(Key) (Source, error) { return g, nil },
		Jitter: -1, Logger: slog.New(slog.DiscardHandler), IdleTimeout: time.Hour, MaxConcurrentReads: 2,
	})
	t.Cleanup(m.Close)
	// Runs first: reads still held (a failed test) end, so Close returns.
	t.Cleanup(func() { close(g.release) })
	before := runtime.NumGoroutine()
	subs := attachAll(t, m, ids...)
	<-g.entered
	<-g.entered
	waitParked(t, m, "saw the queued watchers park", func(k int) bool { return k == n-2 && m.reads.queued() == n-2 })
	if extra := settledGoroutines(before, n/5); float64(extra)/n > 0.2 {
		t.Fatalf("%d watchers, 2 reading: %d more goroutines, want ≤ %d", n, extra, n/5)
	}
	go func() {
		for range n {
			g.release <- struct{}{}
		}
	}()
	for _, s := range subs {
		until(t, s, seqAtLeast(1))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.maxInFlight > 2 {
		t.Fatalf("%d tasks/get in flight at once, want ≤ 2", g.maxInFlight)
	}
}

// blockingSink holds every snapshot's write until released, counting the
// writes in flight (a store whose group commit is slow to come round).
type blockingSink struct {
	release chan struct{}
	mu      sync.Mutex
	in, max int
	entered chan struct{}
}

func (b *blockingSink) Observe(ctx context.Context, _ Key, snap Snapshot) error {
	if !snap.Terminal() {
		return nil
	}
	b.mu.Lock()
	b.in++
	b.max = max(b.max, b.in)
	b.mu.Unlock()
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	b.mu.Lock()
	b.in--
	b.mu.Unlock()
	return nil
}

// A burst of pushed ends reaching parked watchers whose writes wait in the
// store runs at most MaxConcurrentSteps steps at once: the others wait as
// queue entries, not as goroutines (a goroutine per poke, and one more per
// write, would add 2,000 here). Every task's end still reaches its waiter.
func TestPushBurstStepsAreBounded(t *testing.T) {
	const n, steps = 1000, 8
	src := &parkSource{tasks: map[string]*modern.DetailedTask{}, gets: map[string]int{}}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("T%04d", i)
		src.set(task(ids[i], modern.StatusWorking, 1000))
	}
	sink := &blockingSink{release: make(chan struct{}), entered: make(chan struct{}, n)}
	m := NewManager(Config{
		Source: func(Key) (Source, error) { return src, nil },
		Sink:   sink,
		Jitter: -1, Logger: slog.New(slog.DiscardHandler),
		IdleTimeout: time.Hour, PushPollInterval: time.Hour, ListenCoalesce: -1,
		MaxConcurrentSteps: steps,
	})
	t.Cleanup(m.Close)
	t.Cleanup(func() { close(sink.release) }) // first: held writes end
	subs := attachAll(t, m, ids...)
	waitParked(t, m, fmt.Sprintf("reached %d", n), func(k int) bool { return k == n })
	// Every watcher's registration answered, so every push below finds it
	// on the stream (a watcher still waiting for it parks as well).
	for deadline := time.Now().Add(30 * time.Second); ; runtime.Gosched() {
		flowing := 0
		for _, s := range subs {
			if _, ok := m.state(s.e); ok {
				flowing++
			}
		}
		if flowing == n && m.Parked() == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d tasks pushed, %d parked", flowing, n, m.Parked())
		}
	}
	before := runtime.NumGoroutine()
	for _, id := range ids {
		done := task(id, modern.StatusCompleted, 0)
		src.set(done)
		src.push(done)
	}
	for range steps {
		<-sink.entered
	}
	waitParked(t, m, "all woken", func(k int) bool { return k == 0 })
	if extra := settledGoroutines(before, 2*steps); extra > 2*steps {
		t.Fatalf("%d pushed ends, %d writes held: %d more goroutines, want ≤ %d", n, steps, extra, 2*steps)
	}
	go func() {
		for range n - steps {
			<-sink.entered
		}
	}()
	go func() {
		for range n {
			sink.release <- struct{}{}
		}
	}()
	for i, s := range subs {
		if snap := until(t, s, terminal); snap.Task.Status != modern.StatusCompleted {
			t.Fatalf("%s: %v", ids[i], snap.Task.Status)
		}
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.max > steps {
		t.Fatalf("%d writes in flight at once, want ≤ %d", sink.max, steps)
	}
}
