package watch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// fakeClock is a manual Clock. Timers fire only in Advance (or at once for a
// non-positive duration); BlockUntil lets a test wait until the watcher is
// parked on a timer before it advances time.
type fakeClock struct {
	mu        sync.Mutex
	cond      *sync.Cond
	now       time.Time
	timers    map[*fakeTimer]struct{}
	durations []time.Duration // every NewTimer duration, in order
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	c := &fakeClock{now: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC), timers: map[*fakeTimer]struct{}{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	c.durations = append(c.durations, d)
	if d <= 0 {
		t.ch <- c.now
	} else {
		c.timers[t] = struct{}{}
	}
	c.cond.Broadcast()
	return t
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, ok := t.c.timers[t]
	delete(t.c.timers, t)
	t.c.cond.Broadcast()
	return ok
}

// Advance moves time forward and fires the timers that became due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if !t.at.After(c.now) {
			delete(c.timers, t)
			t.ch <- c.now
		}
	}
	c.cond.Broadcast()
}

// BlockUntil waits until n timers are pending (failing the test after 10 s
// of real time: a failsafe, not a synchronisation).
func (c *fakeClock) BlockUntil(t testing.TB, n int) {
	t.Helper()
	timedOut := false
	stop := time.AfterFunc(10*time.Second, func() {
		c.mu.Lock()
		timedOut = true
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer stop.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.timers) < n && !timedOut {
		c.cond.Wait()
	}
	if len(c.timers) < n {
		t.Fatalf("fake clock: %d timers pending, want %d", len(c.timers), n)
	}
}

// WaitPending waits until a pending timer is due in exactly d (failing the
// test after 10 s of real time).
func (c *fakeClock) WaitPending(t testing.TB, d time.Duration) {
	t.Helper()
	timedOut := false
	stop := time.AfterFunc(10*time.Second, func() {
		c.mu.Lock()
		timedOut = true
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer stop.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for !timedOut {
		for tm := range c.timers {
			if tm.at.Sub(c.now) == d {
				return
			}
		}
		c.cond.Wait()
	}
	t.Fatalf("fake clock: no timer due in %v", d)
}

// pendingDurations returns the durations of the pending timers.
func (c *fakeClock) pending() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for t := range c.timers {
		out = append(out, t.at.Sub(c.now))
	}
	return out
}

// fakeSource is an in-process upstream for one or more tasks.
type fakeSource struct {
	mu      sync.Mutex
	tasks   map[string]*modern.DetailedTask
	gets    map[string]int
	getErr  error   // returned by GetTask while set
	updErrs []error // returned by successive UpdateTask calls
	updates []modern.InputResponses
	got     chan string // every GetTask, after it is counted (buffered)

	// push
	push      bool
	ackAll    bool
	listenErr error
	listens   int
	feeds     []*feed
	listened  chan struct{}
}

func newFakeSource() *fakeSource {
	return &fakeSource{tasks: map[string]*modern.DetailedTask{}, gets: map[string]int{},
		got: make(chan string, 1024), listened: make(chan struct{}, 16)}
}

func task(id string, st modern.TaskStatus, pollMs int64) *modern.DetailedTask {
	d := &modern.DetailedTask{Task: modern.Task{TaskID: id, Status: st, CreatedAt: "2026-08-01T12:00:00Z", LastUpdatedAt: "2026-08-01T12:00:00Z"}}
	if pollMs != 0 {
		d.PollIntervalMs = modern.Int64(pollMs)
	}
	if st == modern.StatusCompleted {
		d.Result = []byte(`{"content":[{"type":"text","text":"done"}]}`)
	}
	return d
}

func (f *fakeSource) set(t *modern.DetailedTask) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tasks[t.TaskID] = t
}

func (f *fakeSource) getCount(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gets[id]
}

func (f *fakeSource) GetTask(ctx context.Context, id string) (*modern.DetailedTask, error) {
	f.mu.Lock()
	f.gets[id]++
	err := f.getErr
	t := f.tasks[id]
	f.mu.Unlock()
	defer func() { f.got <- id }()
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "Failed to retrieve task: Task not found")
	}
	c := *t
	return &c, nil
}

func (f *fakeSource) UpdateTask(ctx context.Context, id string, r modern.InputResponses) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, r)
	if len(f.updErrs) > 0 {
		err := f.updErrs[0]
		f.updErrs = f.updErrs[1:]
		return err
	}
	return nil
}

// pushSource is a fakeSource that also implements Pusher.
type pushSource struct{ *fakeSource }

func (p pushSource) ListenTasks(ctx context.Context, ids []string) (<-chan *modern.DetailedTask, []string, error) {
	f := p.fakeSource
	f.mu.Lock()
	f.listens++
	err := f.listenErr
	var ch chan *modern.DetailedTask
	if err == nil {
		ch = make(chan *modern.DetailedTask, 8)
		fd := &feed{ch: ch}
		f.feeds = append(f.feeds, fd)
		// The Pusher contract: the channel closes when ctx ends.
		context.AfterFunc(ctx, fd.close)
	}
	f.mu.Unlock()
	defer func() { f.listened <- struct{}{} }()
	if err != nil {
		return nil, nil, err
	}
	var acked []string
	if f.ackAll {
		acked = ids
	}
	return ch, acked, nil
}

// feed is one listen stream of the fake.
type feed struct {
	mu     sync.Mutex
	ch     chan *modern.DetailedTask
	closed bool
}

func (fd *feed) send(t *modern.DetailedTask) {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	if !fd.closed {
		fd.ch <- t
	}
}

func (fd *feed) close() {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	if !fd.closed {
		fd.closed = true
		close(fd.ch)
	}
}

// feed returns the latest listen stream.
func (f *fakeSource) feed() *feed {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.feeds[len(f.feeds)-1]
}

// tempErr is a retryable transport failure, like upstream/modern's ErrUnavailable.
type tempErr struct{ rpc *rpc.Error }

func (e *tempErr) Error() string   { return e.rpc.Message }
func (e *tempErr) Unwrap() error   { return e.rpc }
func (e *tempErr) Temporary() bool { return true }

func unavailable() error {
	return &tempErr{rpc.Errorf(rpc.CodeInternalError, "upstream http://127.0.0.1:9/mcp unreachable: connection refused")}
}

var errNonRetryable = errors.New("permanent")
