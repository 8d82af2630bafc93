// Package watch follows upstream tasks: one watcher per upstream task, shared
// by every waiter and every read of that task (docs/ARCHITECTURE.md, One
// watcher per upstream task; Each input key is asked once and answered once;
// A client giving up ends only its own wait). A watcher reads the task through notifications/tasks when the
// upstream offers them and otherwise polls tasks/get at the task's
// pollIntervalMs (M-24, M-25), hands every snapshot to a Sink (the face
// persists it) and then to its subscribers, and stops on a terminal state, on
// "task gone" (-32602, M-27) or when nobody has watched it for a while. The
// watchers of one upstream session share their notification streams (see
// mux.go), and their scheduled reads are bounded per process.
package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/coord"
	"github.com/tasksbridge/tasksbridge/runtime/steps"
)

// Key names one upstream task.
type Key struct {
	// Target names the upstream (its URL or command); tasks of different
	// upstreams never share a watcher even when their ids collide.
	Target string
	// TaskID is the upstream's task id.
	TaskID string
}

// Source is what a watcher needs from the upstream. upstream/modern's
// TaskSource implements it (and Pusher).
type Source interface {
	GetTask(ctx context.Context, taskID string) (*modern.DetailedTask, error)
	UpdateTask(ctx context.Context, taskID string, responses modern.InputResponses) error
}

// Pusher is implemented by a Source that can subscribe to notifications/tasks
// (M-33). The channel delivers task states and is closed when the
// subscription ends (also when ctx ends); acked lists the task ids the
// upstream agreed to report.
type Pusher interface {
	ListenTasks(ctx context.Context, taskIDs []string) (updates <-chan *modern.DetailedTask, acked []string, err error)
}

// Sink receives every snapshot that carries news (a task state or "gone")
// before subscribers see it, so the face can make it durable first; the
// monotonic merge (terminal never changes, a pinned cancel wins) is the
// sink's business. An error is logged and the snapshot is still delivered.
type Sink interface {
	Observe(ctx context.Context, key Key, snap Snapshot) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, key Key, snap Snapshot) error

// Observe calls f.
func (f SinkFunc) Observe(ctx context.Context, key Key, snap Snapshot) error {
	return f(ctx, key, snap)
}

// Snapshot is what a watcher knows about its task at one moment. Snapshots
// share the *DetailedTask; treat it as read-only.
type Snapshot struct {
	Key Key
	// Task is the latest state read from the upstream; nil until the first
	// successful read.
	Task *modern.DetailedTask
	// FetchedAt is when Task was read (zero when Task is nil).
	FetchedAt time.Time
	// Seq counts the watcher's attempts and notifications; it grows with
	// every published snapshot.
	Seq uint64
	// Err is the error of the latest attempt, nil when it succeeded. Task
	// (if any) is then the last good state; the watcher keeps retrying.
	Err error
	// Gone is the upstream's -32602 for tasks/get: the task is unknown or
	// expired (M-27). A gone snapshot is terminal.
	Gone *rpc.Error
	// Pushed reports that Task arrived as notifications/tasks.
	Pushed bool
	// Relayed reports that the snapshot was read by another replica, the
	// holder of the task's lease (Config.Coord), which handed it to its own
	// Sink before sharing it: a Sink need not record it again.
	Relayed bool
}

// Terminal reports whether the task can no longer change: completed, failed,
// cancelled, or gone.
func (s Snapshot) Terminal() bool {
	return s.Gone != nil || (s.Task != nil && s.Task.Status.IsTerminal())
}

// Config configures a Manager. Zero values select the defaults.
type Config struct {
	// Source resolves the upstream of a key; called when a watcher starts and
	// by Answer. Required.
	Source func(Key) (Source, error)
	// Sink receives the snapshots (nil: none).
	Sink Sink
	// EarlyTerminal hands a terminal snapshot to the subscribers before the
	// Sink records it, so waiters are not held behind a durable write. Set
	// it only when a waiter may answer from a terminal snapshot the Sink has
	// not recorded yet (the legacy face may, see its observe).
	EarlyTerminal bool
	// Clock defaults to the wall clock.
	Clock Clock
	// ListenClock times the shared listens' coalescing and backoff (see
	// mux.go). It defaults to the wall clock, not to Clock: a caller that
	// drives the watchers' reads by hand still has its listens opened.
	ListenClock Clock
	// DefaultPollInterval is used when a task suggests none, or ≤ 0 (M-24).
	// Default 1s.
	DefaultPollInterval time.Duration
	// MinPollInterval and MaxPollInterval clamp the task's pollIntervalMs.
	// Defaults 100ms and 30s.
	MinPollInterval, MaxPollInterval time.Duration
	// MaxBackoff caps the exponential backoff after errors. Default 30s.
	MaxBackoff time.Duration
	// IdleTimeout is how long a watcher keeps going after its last
	// subscriber left (so a reconnecting waiter or the next tasks/get finds
	// it warm). Default 30s; negative: stop at once.
	IdleTimeout time.Duration
	// PushPollInterval is the safety poll cadence while notifications/tasks
	// flow (M-33: a client MAY keep polling). Default 30s; negative: none.
	PushPollInterval time.Duration
	// DisablePush never subscribes, even when the Source is a Pusher.
	DisablePush bool
	// MaxStreamTasks bounds the task ids of one listen shared by the tasks
	// of an upstream session (SessionPusher; see mux.go). Default
	// DefaultMaxStreamTasks.
	MaxStreamTasks int
	// ListenCoalesce is the shortest time between two re-listens of one
	// shared listen per 100 ids it carries: ids added meanwhile join the
	// next one. Default DefaultListenCoalesce; negative: none (re-listen as
	// soon as the previous listen was acknowledged).
	ListenCoalesce time.Duration
	// Jitter is the ± fraction applied to every delay. Default 0.1; negative:
	// none.
	Jitter float64
	// Rand returns a number in [0,1); defaults to math/rand/v2.
	Rand func() float64
	// RequestTimeout bounds one upstream request (wall clock). Default 30s.
	RequestTimeout time.Duration
	// MaxConcurrentReads bounds the watchers' tasks/get requests in flight
	// at once. Thousands of watchers starting together (a burst of waits on
	// distinct tasks) otherwise open as many upstream connections at once,
	// each with its goroutines and buffers, and the process keeps the peak
	// long after; a healthy upstream answers a read in milliseconds, so the
	// queue drains at once. Default DefaultMaxConcurrentReads.
	MaxConcurrentReads int
	// MaxConcurrentSteps bounds the parking watchers' steps running at once
	// (reading a notification, writing its snapshot to the store); more wait
	// in a queue, a record each rather than a goroutine each. A step that
	// waits on the upstream gives its place up first (runtime/steps). Default
	// DefaultMaxConcurrentSteps.
	MaxConcurrentSteps int
	// Retryable decides whether a failed tasks/update is retried (Answer).
	// Default: errors with a Temporary() bool method that returns true
	// (upstream/modern's ErrUnavailable).
	Retryable func(error) bool
	// Logger defaults to slog.Default(). Task ids are logged at debug level
	// only (docs/ARCHITECTURE.md, No secret or id in logs and labels).
	Logger *slog.Logger

	// Coord shares each task's watcher among the replicas that use the same
	// coordinator (bridges on one Redis): the replica holding the task's
	// lease reads the upstream and shares every snapshot; the others relay
	// what it shares to their subscribers and take the lease over when its
	// holder stops renewing it. Nil: this process watches alone (one
	// process per store, as with Badger).
	Coord coord.Coordinator
	// LeaseTTL is the lease period: a holder renews its lease every third
	// of it, and a replica with subscribers takes over a lease whose holder
	// died within a period and a third. Default DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Replica names this process in lease holders (operator views; never a
	// credential). Default: the host name.
	Replica string
}

func (c *Config) defaults() {
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	if c.ListenClock == nil {
		c.ListenClock = realClock{}
	}
	if c.DefaultPollInterval <= 0 {
		c.DefaultPollInterval = time.Second
	}
	if c.MinPollInterval <= 0 {
		c.MinPollInterval = 100 * time.Millisecond
	}
	if c.MaxPollInterval <= 0 {
		c.MaxPollInterval = 30 * time.Second
	}
	if c.MaxPollInterval < c.MinPollInterval {
		c.MaxPollInterval = c.MinPollInterval
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 30 * time.Second
	}
	if c.MaxStreamTasks <= 0 {
		c.MaxStreamTasks = DefaultMaxStreamTasks
	}
	if c.ListenCoalesce == 0 {
		c.ListenCoalesce = DefaultListenCoalesce
	}
	if c.PushPollInterval == 0 {
		c.PushPollInterval = 30 * time.Second
	}
	if c.Jitter == 0 {
		c.Jitter = 0.1
	}
	if c.Jitter < 0 {
		c.Jitter = 0
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.MaxConcurrentReads <= 0 {
		c.MaxConcurrentReads = DefaultMaxConcurrentReads
	}
	if c.MaxConcurrentSteps <= 0 {
		c.MaxConcurrentSteps = DefaultMaxConcurrentSteps
	}
	if c.Retryable == nil {
		c.Retryable = Temporary
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.Replica == "" {
		c.Replica, _ = os.Hostname()
	}
}

// DefaultMaxConcurrentReads is Config.MaxConcurrentReads's default.
const DefaultMaxConcurrentReads = 64

// DefaultMaxConcurrentSteps is Config.MaxConcurrentSteps's default: enough
// steps in flight for the store's group commit to batch their writes
// (each fsync round covers every write queued meanwhile), few enough that a
// burst of pokes does not become thousands of goroutines waiting on it.
const DefaultMaxConcurrentSteps = 128

// Temporary reports whether err (or an error in its chain) has a
// Temporary() bool method that returns true.
func Temporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// Manager owns the watchers of one process: at most one per Key
// (docs/ARCHITECTURE.md, One watcher per upstream task).
type Manager struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc

	mux    *muxer        // the listens shared by an upstream session's tasks
	reads  *readGate     // MaxConcurrentReads tokens
	steps  *steps.Runner // MaxConcurrentSteps places
	timers parkTimers    // the parked watchers' next steps

	mu      sync.Mutex
	entries map[Key]*entry
	closed  bool
	wg      sync.WaitGroup

	parkMu  sync.Mutex
	parkedN int        // watchers parked (no goroutine)
	parkC   *sync.Cond // broadcast when parkedN changes (tests wait on it)
}

// parkedMoved counts a watcher parking (+1) or resuming (-1).
func (m *Manager) parkedMoved(d int) {
	m.parkMu.Lock()
	m.parkedN += d
	m.parkC.Broadcast()
	m.parkMu.Unlock()
}

// Parked returns the number of watchers parked now: waiting for their next
// event or timer with no goroutine (tests, metrics).
func (m *Manager) Parked() int {
	m.parkMu.Lock()
	defer m.parkMu.Unlock()
	return m.parkedN
}

// WaitParked waits until cond holds on the number of parked watchers, or
// until ctx ends; it reports whether cond held (tests wait on it instead
// of sleeping).
func (m *Manager) WaitParked(ctx context.Context, cond func(n int) bool) bool {
	stop := context.AfterFunc(ctx, func() {
		m.parkMu.Lock()
		m.parkC.Broadcast()
		m.parkMu.Unlock()
	})
	defer stop()
	m.parkMu.Lock()
	defer m.parkMu.Unlock()
	for !cond(m.parkedN) && ctx.Err() == nil {
		m.parkC.Wait()
	}
	return cond(m.parkedN)
}

// entry is one watched task: its subscribers, its latest snapshot and, while
// it runs, its watcher (on a goroutine or parked).
type entry struct {
	key Key
	// subs are the subscribers, each at its Subscription.idx (a slice, not
	// a map: a task waited on by one waiter then costs one pointer).
	subs []*Subscription
	// snap is the latest snapshot (nil: none yet), stored under
	// Manager.mu and read without it by Subscription.Latest: one copy per
	// task rather than one per subscriber, and a notify callback may read
	// it while the manager holds its lock (attach offers under it).
	snap   atomic.Pointer[Snapshot]
	m      *Manager  // its manager (the subscriptions reach it through the entry)
	idleAt time.Time // when subs became empty (zero while watched)
	// woken and kicked are the watcher's pending signals, set before its
	// poke: flags rather than a cap-1 channel each, so a parked watcher (no
	// goroutine selecting) keeps two words, not two channels. woken:
	// subscribers changed; kicked: "read now unless an attempt finished
	// after seq", stored as seq+1 (0: none; a request already pending
	// stands). A watcher that blocks in a select hears the poke on its own
	// channel (watcher.pokeC).
	kicked  atomic.Uint64
	w       atomic.Pointer[watcher]
	woken   atomic.Bool
	running bool
	pushing bool // the upstream reports the task's changes (notifications/tasks flow)
}

// latest returns e's latest snapshot (only its Key before the first one).
func (e *entry) latest() Snapshot {
	if p := e.snap.Load(); p != nil {
		return *p
	}
	return Snapshot{Key: e.key}
}

// poke wakes e's watcher (if parked) after one of its signals was set.
func (e *entry) poke() {
	if w := e.w.Load(); w != nil {
		w.poke()
	}
}

// signalWake tells e's watcher that its subscribers changed.
func (e *entry) signalWake() {
	e.woken.Store(true)
	e.poke()
}

// askRead asks e's watcher to read now unless an attempt finished after
// seen (a request already pending stands).
func (e *entry) askRead(seen uint64) {
	e.kicked.CompareAndSwap(0, seen+1)
	e.poke()
}

// takeKick consumes a pending read request: seen is the caller's seq.
func (e *entry) takeKick() (seen uint64, ok bool) {
	if v := e.kicked.Swap(0); v != 0 {
		return v - 1, true
	}
	return 0, false
}

// pending reports whether a signal waits for the watcher.
func (e *entry) pending() bool {
	return e.woken.Load() || e.kicked.Load() != 0
}

// NewManager returns a Manager. cfg.Source is required.
func NewManager(cfg Config) *Manager {
	cfg.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{cfg: cfg, ctx: ctx, cancel: cancel, entries: map[Key]*entry{}}
	m.mux = newMuxer(m)
	m.parkC = sync.NewCond(&m.parkMu)
	m.reads = newReadGate(cfg.MaxConcurrentReads)
	m.steps = steps.New(cfg.MaxConcurrentSteps)
	return m
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("watch: manager closed")

// Close stops every watcher and ends every subscription (their channels
// close). It waits for the watchers to exit.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	var subs []*Subscription
	for _, e := range m.entries {
		subs = append(subs, e.subs...)
	}
	entries := make([]*entry, 0, len(m.entries))
	for _, e := range m.entries {
		entries = append(entries, e)
	}
	m.mu.Unlock()
	m.cancel()
	// Parked watchers hold no context hook: wake them to see the end.
	for _, e := range entries {
		e.poke()
	}
	for _, s := range subs {
		s.Close()
	}
	m.wg.Wait()
	m.stopTimers()
}

// Watching returns the number of running watchers (for tests and metrics).
func (m *Manager) Watching() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, e := range m.entries {
		if e.running {
			n++
		}
	}
	return n
}

// Subscription is one waiter's view of a watched task.
type Subscription struct {
	// C delivers snapshots, newest wins: a snapshot not yet received is
	// replaced by a newer one, so a slow reader never blocks the watcher and
	// always gets the latest state. C is closed when the subscription ends.
	C <-chan Snapshot

	e    *entry // and through it the Manager
	ch   chan Snapshot
	stop func() bool // unregisters the context hook
	// notify is called after each snapshot offered and when C closes (nil:
	// none): a waiter with no goroutine of its own hears it (AttachNotify).
	notify func()
	mu     sync.Mutex
	idx    int32 // its place in e.subs (under Manager.mu)
	ended  bool
}

// Latest returns the newest snapshot of the task: the one last offered to
// this subscription, or one published since and about to be offered. It
// reads the entry's copy (a subscription keeps none of its own) and never
// waits for the Manager's lock, so a notify callback may call it.
func (s *Subscription) Latest() Snapshot {
	return s.e.latest()
}

// offer replaces an unreceived snapshot by snap. Only the manager sends, with
// s.mu held, so the send after the drain never blocks.
func (s *Subscription) offer(snap Snapshot) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	select {
	case <-s.ch:
	default:
	}
	s.ch <- snap
	s.mu.Unlock()
	if s.notify != nil {
		s.notify()
	}
}

// Close ends this subscription only (docs/ARCHITECTURE.md, A client giving
// up ends only its own wait): the watcher and the other
// subscribers carry on. Safe to call more than once.
func (s *Subscription) Close() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	close(s.ch)
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.e.m.detach(s)
	if s.notify != nil {
		s.notify()
	}
}

// Attach subscribes to key's task, starting its watcher if none runs. The
// subscription ends when ctx ends or Close is called. The current snapshot,
// if there is one, is already waiting on C.
func (m *Manager) Attach(ctx context.Context, key Key) (*Subscription, error) {
	return m.attach(ctx, key, nil)
}

// AttachNotify is Attach for a waiter with no goroutine blocked on C:
// notify is called (on the caller's or a watcher's goroutine; it must not
// block) after every snapshot offered on C and once C closes; the waiter
// then receives from C without blocking.
func (m *Manager) AttachNotify(ctx context.Context, key Key, notify func()) (*Subscription, error) {
	return m.attach(ctx, key, notify)
}

func (m *Manager) attach(ctx context.Context, key Key, notify func()) (*Subscription, error) {
	if key.TaskID == "" {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "watch: empty task id")
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	e := m.entries[key]
	if e == nil {
		e = &entry{key: key, m: m}
		m.entries[key] = e
	}
	ch := make(chan Snapshot, 1)
	s := &Subscription{C: ch, e: e, ch: ch, notify: notify}
	s.idx = int32(len(e.subs))
	e.subs = append(e.subs, s)
	e.idleAt = time.Time{}
	cur := e.latest()
	if cur.Seq > 0 {
		// Under m.mu, so a concurrent publish cannot be overtaken by this
		// older snapshot.
		s.offer(cur)
	}
	start := !e.running && !cur.Terminal()
	if start {
		e.running = true
	}
	m.mu.Unlock()
	e.signalWake()
	if start {
		if err := m.start(e); err != nil {
			s.Close()
			return nil, err
		}
	}
	if ctx.Done() == nil {
		return s, nil // a context that never ends needs no hook
	}
	// The hook may fire (and Close run) before AfterFunc returns, so stop is
	// published under s.mu; a Close that already ran leaves nothing to stop.
	stop := context.AfterFunc(ctx, s.Close)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		stop()
		return s, nil
	}
	s.stop = stop
	s.mu.Unlock()
	return s, nil
}

func (m *Manager) detach(s *Subscription) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := s.e
	if i := int(s.idx); i < len(e.subs) && e.subs[i] == s {
		last := len(e.subs) - 1
		moved := e.subs[last]
		moved.idx = int32(i)
		e.subs[i] = moved
		e.subs[last] = nil
		e.subs = e.subs[:last]
	}
	if len(e.subs) > 0 {
		return
	}
	if !e.running {
		if m.entries[e.key] == e {
			delete(m.entries, e.key)
		}
		return
	}
	e.idleAt = m.cfg.Clock.Now()
	e.signalWake()
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// start launches e's watcher (e.running is already set).
func (m *Manager) start(e *entry) error {
	src, err := m.cfg.Source(e.key)
	if err != nil {
		m.mu.Lock()
		e.running = false
		m.mu.Unlock()
		return fmt.Errorf("watch: resolve upstream %s: %w", e.key.Target, err)
	}
	w := &watcher{m: m, e: e, src: src}
	if p, ok := src.(Pusher); ok && !m.cfg.DisablePush {
		w.pusher = p
		if sp, ok := src.(SessionPusher); ok {
			if s := sp.PushSession(); s != "" {
				w.session = m.mux.intern(muxKey{target: e.key.Target, session: s})
			}
		}
	}
	e.w.Store(w)
	// The watcher counts in wg from its start to its end, parked or not.
	m.wg.Add(1)
	m.steps.Run(func(sl *steps.Slot) {
		if !w.run(sl) {
			m.wg.Done()
		}
	})
	return nil
}

// publish records snap as e's latest, hands it to the sink when it carries
// news, then to every subscriber and to share (the other replicas; nil:
// none). A terminal snapshot also retires the watcher.
func (m *Manager) publish(ctx context.Context, e *entry, snap Snapshot, share func(Snapshot)) {
	early := m.cfg.EarlyTerminal && snap.Terminal()
	if !early {
		m.sink(ctx, e, snap)
	}
	m.mu.Lock()
	e.snap.Store(&snap)
	if snap.Terminal() {
		// The watcher ends with this snapshot. Marking it stopped in the same
		// critical section means an Attach either sees a running watcher or a
		// terminal snapshot, never a gap that would start a second watcher.
		e.running = false
		if len(e.subs) == 0 && m.entries[e.key] == e {
			delete(m.entries, e.key)
		}
	}
	subs := slices.Clone(e.subs)
	m.mu.Unlock()
	for _, s := range subs {
		s.offer(snap)
	}
	if share != nil {
		share(snap)
	}
	if early {
		m.sink(ctx, e, snap)
	}
}

// sink hands a snapshot with news to the Sink.
func (m *Manager) sink(ctx context.Context, e *entry, snap Snapshot) {
	if m.cfg.Sink != nil && snap.Err == nil && (snap.Task != nil || snap.Gone != nil) {
		if err := m.cfg.Sink.Observe(ctx, e.key, snap); err != nil {
			m.cfg.Logger.Warn("watch: sink failed; snapshot delivered anyway", "upstream", e.key.Target, "err", err)
		}
	}
}

// state returns e's latest snapshot and whether its changes are pushed.
func (m *Manager) state(e *entry) (Snapshot, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return e.latest(), e.pushing
}

// setPushing records whether e's changes are pushed (the watcher's listen
// was acknowledged and its stream is open).
func (m *Manager) setPushing(e *entry, v bool) {
	m.mu.Lock()
	e.pushing = v
	m.mu.Unlock()
}

// snapshot returns e's latest snapshot.
func (m *Manager) snapshot(e *entry) Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return e.latest()
}

// Get returns key's latest snapshot, refreshed from the upstream only when it
// is older than maxAge (M-24: tasks/get never polls the upstream
// more often than the task's pollInterval). maxAge ≤ 0 means the task's own
// (clamped) poll interval. Concurrent Gets share one refresh. When a refresh
// fails and an older state exists, that state is returned with Err set and a
// nil error; with no state at all the refresh error is returned.
func (m *Manager) Get(ctx context.Context, key Key, maxAge time.Duration) (Snapshot, error) {
	sub, err := m.Attach(ctx, key)
	if err != nil {
		return Snapshot{}, err
	}
	defer sub.Close()
	snap, pushing := m.state(sub.e)
	if snap.Terminal() {
		return snap, nil
	}
	if snap.Task != nil && pushing {
		// The upstream reports every change of the task while its
		// notifications flow (M-33): the latest state is current, and a
		// read of a stalled upstream would only delay the answer (and, the
		// watcher reading one request at a time, the pushed changes too).
		return snap, nil
	}
	if snap.Task != nil {
		age := maxAge
		if age <= 0 {
			age = m.interval(snap.Task)
		}
		if m.cfg.Clock.Now().Sub(snap.FetchedAt) < age {
			return snap, nil
		}
	}
	seen := snap.Seq
	sub.e.askRead(seen)
	for {
		select {
		case s, ok := <-sub.C:
			if !ok {
				return snap, fmt.Errorf("watch: get: %w", ErrClosed)
			}
			if s.Seq <= seen {
				continue
			}
			if s.Task == nil && s.Gone == nil {
				return s, s.Err
			}
			return s, nil
		case <-ctx.Done():
			return snap, ctx.Err()
		}
	}
}

// Refresh asks key's watcher, if one runs, to poll now rather than at its
// next tick (an attempt already finished after the caller's last look makes it
// a no-op).
func (m *Manager) Refresh(key Key) {
	m.mu.Lock()
	e := m.entries[key]
	var seq uint64
	if e != nil {
		seq = e.latest().Seq
	}
	m.mu.Unlock()
	if e != nil {
		e.askRead(seq)
	}
}

// Answer sends the responses to key's outstanding input requests upstream
// with tasks/update, retrying retryable failures with backoff until the
// upstream acknowledges or ctx ends (M-28, M-30). The caller has recorded the
// keys durably first; the upstream ignores keys it already has, so a resend
// after a crash is harmless (M-30; docs/ARCHITECTURE.md, Each input key is
// asked once and answered once). After the acknowledgement the
// watcher polls at once to pick up the task's next state.
func (m *Manager) Answer(ctx context.Context, key Key, responses modern.InputResponses) error {
	if len(responses) == 0 {
		return nil
	}
	src, err := m.cfg.Source(key)
	if err != nil {
		return fmt.Errorf("watch: resolve upstream %s: %w", key.Target, err)
	}
	var backoff time.Duration
	for {
		rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		err := src.UpdateTask(rctx, key.TaskID, responses)
		cancel()
		if err == nil {
			m.Refresh(key)
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("watch: answer input requests: %w", ctx.Err())
		}
		if !m.cfg.Retryable(err) {
			return err
		}
		backoff = m.nextBackoff(backoff, m.cfg.DefaultPollInterval)
		m.cfg.Logger.Debug("watch: tasks/update failed; retrying", "upstream", key.Target, "task", key.TaskID, "in", backoff, "err", err)
		t := m.cfg.Clock.NewTimer(m.jitter(backoff))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("watch: answer input requests: %w", ctx.Err())
		}
	}
}

// interval is the task's poll interval, defaulted and clamped (M-24).
func (m *Manager) interval(t *modern.DetailedTask) time.Duration {
	d := m.cfg.DefaultPollInterval
	if t != nil {
		d = t.PollInterval(d)
	}
	return min(max(d, m.cfg.MinPollInterval), m.cfg.MaxPollInterval)
}

// nextBackoff doubles prev (starting from base), capped at MaxBackoff.
func (m *Manager) nextBackoff(prev, base time.Duration) time.Duration {
	if prev <= 0 {
		return min(max(base, m.cfg.MinPollInterval), m.cfg.MaxBackoff)
	}
	return min(prev*2, m.cfg.MaxBackoff)
}

// jitter spreads d by ±Jitter so that many watchers do not poll in step.
func (m *Manager) jitter(d time.Duration) time.Duration {
	if m.cfg.Jitter == 0 || d <= 0 {
		return d
	}
	f := 1 - m.cfg.Jitter + 2*m.cfg.Jitter*m.cfg.Rand()
	return time.Duration(float64(d) * f)
}
