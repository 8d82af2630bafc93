package watch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
)

// Shared notification streams (M-33, M-47). A watcher that listens on its
// own opens one subscriptions/listen per task: one upstream request held
// open, its connection and its goroutines for every watched task. When the
// Source names the upstream session its requests run under (SessionPusher:
// the upstream and the principal whose credential opens the listen), the
// watchers of that session share listens instead: a multiplexer keeps the
// set of task ids watched under the session and serves it with one listen
// whose filter carries all of them (taskIds:[…]).
//
// The protocol has no "add to a subscription": a new id means a new listen
// with the new set. Two bounds keep that cheap:
//   - the set is split into shards of at most Config.MaxStreamTasks ids, each
//     served by its own listen, and a new id joins the first shard with room,
//     so a re-listen sends at most MaxStreamTasks ids whatever the size of
//     the session's set (a task added costs O(MaxStreamTasks), not O(n));
//   - additions are coalesced: a shard re-listens at most once per
//     Config.ListenCoalesce for every coalesceStep ids it holds (50 ms up
//     to 100 ids, 500 ms at 1,000), with every id added meanwhile. A
//     re-listen's cost grows with the shard, and so does the time between
//     two of them: a shard re-sends at most coalesceStep ids per
//     ListenCoalesce (2,000 ids a second by default) however fast tasks
//     arrive, and tasks arriving at a rate r cost about that ÷ r re-sent
//     ids each, whatever the shard's size.
//
// A session with n watched tasks thus holds ⌈n/MaxStreamTasks⌉ streams (plus
// one being replaced). A replacement has no gap: the old listen keeps being
// read until the new one is acknowledged, then it is closed; snapshots are
// de-duplicated by task and state, and once the new listen is in place the
// old one's last buffered notifications are ignored so that a state never
// goes back. The acknowledged filter is checked per id (M-15): an id the
// upstream left out is answered "not acknowledged" and its watcher polls
// tasks/get at the task's pollIntervalMs (M-24). A listen that ends ends
// the registrations of its tasks' watchers, which poll at once and listen
// again with backoff (M-14); the shard itself does not re-listen before its own
// backoff has passed, so a failing upstream sees one listen per shard per
// backoff step, not one per task. A removed id costs nothing: it stays in the
// shard's current filter (its notifications are dropped) until the next
// re-listen leaves it out, and a shard left empty closes its listen.
//
// Tenancy: sessions never share a stream. A stream is opened with the
// session's own Pusher (its principal's credential), and carries only the
// ids watched under that session.

// SessionPusher is a Pusher whose listens may be shared by every task
// watched under the same upstream session.
type SessionPusher interface {
	Pusher
	// PushSession names the upstream session a listen runs under: tasks of
	// one Target whose sources return the same non-empty name share streams.
	// It must differ between principals (and credentials of different
	// principals); "" keeps one listen per task. Never logged.
	PushSession() string
}

// SessionOf is a PushSession name for a principal, or, without one, for the
// credential the requests carry (so that anonymous callers with different
// credentials never share): a digest, never the credential itself.
func SessionOf(principal, authorization string) string {
	if principal != "" {
		return "p:" + principal
	}
	h := sha256.Sum256([]byte("tasksbridge/watch-session\x00" + authorization))
	return "a:" + hex.EncodeToString(h[:16])
}

// Defaults of the multiplexer's Config fields.
const (
	// DefaultMaxStreamTasks bounds the ids of one shared listen.
	DefaultMaxStreamTasks = 1000
	// DefaultListenCoalesce is the shortest time between two re-listens of
	// one shard.
	DefaultListenCoalesce = 50 * time.Millisecond
	// coalesceStep is the number of ids a shard holds per ListenCoalesce
	// between two of its re-listens.
	coalesceStep = 100
)

// coalesceLocked is the shortest time between two re-listens of sh.
func (mx *muxer) coalesceLocked(sh *muxShard) time.Duration {
	w := max(mx.m.cfg.ListenCoalesce, 0)
	return w * time.Duration((len(sh.subs)+coalesceStep-1)/coalesceStep)
}

type muxKey struct{ target, session string }

// muxer holds the shared streams of one Manager.
type muxer struct {
	m      *Manager
	mu     sync.Mutex
	groups map[muxKey]*muxGroup
	opened int // listens acknowledged (for tests and metrics)
	// changed is broadcast on every registration and acknowledgement, so
	// tests can wait for a state without sleeping.
	changed *sync.Cond
}

// muxGroup is one upstream session's shards.
type muxGroup struct {
	key    muxKey
	src    Pusher // the latest registrant's: opens the session's listens
	shards []*muxShard
}

// muxShard is up to MaxStreamTasks ids served by one listen.
type muxShard struct {
	g       *muxGroup
	subs    map[string]*muxSub
	waiting int // subs not answered yet
	cur     *muxStream
	opening bool
	dirtyAt time.Time // when the oldest waiting sub arrived (zero: none)
	after   time.Time // no listen before (backoff)
	backoff time.Duration
	wake    chan struct{}
	opened  chan muxOpened
	running bool
}

// muxStream is one acknowledged listen.
type muxStream struct {
	cancel context.CancelFunc
	ch     <-chan *modern.DetailedTask
}

// muxSub is one watcher's registration. Its deliveries wait in a slot the
// watcher takes from (take) when poked, not in a channel: a parked watcher
// keeps one pointer for them rather than a channel per task.
type muxSub struct {
	id     string
	sh     *muxShard
	next   *modern.DetailedTask // delivered, not yet taken (newest wins)
	ready  chan muxAnswer       // cap 1; nil once answered
	w      *watcher             // poked after the answer, each delivery and the end (nil: none)
	answer bool                 // ready was sent
	closed bool                 // the registration ended (after next, if any, is taken)
	// the last state delivered (de-duplication across listens): its status
	// as a code (statusCode; 0: none delivered), lastUpdatedAt and message
	status             uint8
	updatedAt, message string
}

// statusCode numbers the five statuses for muxSub (a byte rather than a
// string kept per registration); 0 for none, and for a status outside the
// five, which is then never taken for a repeat.
func statusCode(s modern.TaskStatus) uint8 {
	switch s {
	case modern.StatusWorking:
		return 1
	case modern.StatusInputRequired:
		return 2
	case modern.StatusCompleted:
		return 3
	case modern.StatusFailed:
		return 4
	case modern.StatusCancelled:
		return 5
	}
	return 0
}

type muxAnswer struct {
	acked bool
	err   error
}

type muxOpened struct {
	subs   []*muxSub
	ch     <-chan *modern.DetailedTask
	acked  []string
	err    error
	cancel context.CancelFunc
}

func newMuxer(m *Manager) *muxer {
	mx := &muxer{m: m, groups: map[muxKey]*muxGroup{}}
	mx.changed = sync.NewCond(&mx.mu)
	return mx
}

// intern returns the session name of key's group if it has one: every
// watcher of a session then shares one copy of the name rather than
// keeping the one its source made (a digest per call, see SessionOf).
func (mx *muxer) intern(key muxKey) string {
	mx.mu.Lock()
	defer mx.mu.Unlock()
	if g := mx.groups[key]; g != nil {
		return g.key.session
	}
	return key.session
}

// register adds id to its session's first shard with room; ready delivers
// the shard's answer (the muxSub lets go of it once answered). w (nil:
// none) is poked after the answer, each delivery and the end.
func (mx *muxer) register(key muxKey, src Pusher, id string, w *watcher) (s *muxSub, ready <-chan muxAnswer) {
	m := mx.m
	limit := m.cfg.MaxStreamTasks
	mx.mu.Lock()
	defer mx.mu.Unlock()
	g := mx.groups[key]
	if g == nil {
		g = &muxGroup{key: key}
		mx.groups[key] = g
	}
	g.src = src
	var sh *muxShard
	for _, c := range g.shards {
		if old := c.subs[id]; old != nil && mx.dropLocked(old) {
			signal(c.wake) // a previous registration of the same task
		}
		if sh == nil && len(c.subs) < limit {
			sh = c
		}
	}
	if sh == nil {
		sh = &muxShard{g: g, subs: map[string]*muxSub{}, wake: make(chan struct{}, 1), opened: make(chan muxOpened, 1)}
		g.shards = append(g.shards, sh)
	}
	s = &muxSub{id: id, sh: sh, ready: make(chan muxAnswer, 1), w: w}
	ready = s.ready
	sh.subs[id] = s
	sh.waiting++
	mx.changed.Broadcast()
	if sh.dirtyAt.IsZero() {
		sh.dirtyAt = m.cfg.ListenClock.Now()
	}
	if !sh.running {
		sh.running = true
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			mx.run(sh)
		}()
	} else {
		signal(sh.wake)
	}
	return s, ready
}

// unregister removes s (its watcher stopped listening).
func (mx *muxer) unregister(s *muxSub) {
	mx.mu.Lock()
	defer mx.mu.Unlock()
	if mx.dropLocked(s) {
		signal(s.sh.wake)
		mx.changed.Broadcast()
	}
}

// dropLocked removes s from its shard and marks it ended (its watcher is
// poked); false when it was gone already.
func (mx *muxer) dropLocked(s *muxSub) bool {
	sh := s.sh
	if sh.subs[s.id] != s {
		return false
	}
	delete(sh.subs, s.id)
	if !s.answer {
		sh.waiting--
	}
	if !s.closed {
		s.closed = true
		if s.w != nil {
			s.w.poke()
		}
	}
	return true
}

func (mx *muxer) answerLocked(s *muxSub, a muxAnswer) {
	if s.answer {
		return
	}
	s.answer = true
	s.sh.waiting--
	s.ready <- a
	// Its one reader holds the channel (register's ready) until it has
	// received: a subscription parked for long keeps no answer channel.
	s.ready = nil
	if s.w != nil {
		s.w.poke()
	}
}

// run serves one shard: it opens a listen when ids wait for one (at most
// once per ListenCoalesce, not before the backoff), swaps streams on their
// acknowledgement, and stops once the shard has no ids left.
func (mx *muxer) run(sh *muxShard) {
	m := mx.m
	clk := m.cfg.ListenClock
	for {
		mx.mu.Lock()
		if len(sh.subs) == 0 && !sh.opening {
			if sh.cur != nil {
				sh.cur.cancel()
				sh.cur = nil
			}
			sh.running = false
			sh.dirtyAt = time.Time{}
			g := sh.g
			for i, c := range g.shards {
				if c == sh {
					g.shards = append(g.shards[:i], g.shards[i+1:]...)
					break
				}
			}
			if len(g.shards) == 0 && mx.groups[g.key] == g {
				delete(mx.groups, g.key)
			}
			mx.mu.Unlock()
			return
		}
		now := clk.Now()
		var wakeAt time.Time
		if !sh.opening && sh.waiting > 0 {
			at := sh.dirtyAt.Add(mx.coalesceLocked(sh))
			if sh.after.After(at) {
				at = sh.after
			}
			if now.Before(at) {
				wakeAt = at
			} else {
				mx.openLocked(sh)
			}
		}
		mx.mu.Unlock()

		var timerC <-chan time.Time
		var timer Timer
		if !wakeAt.IsZero() {
			// From the clock's time now, not the one read under the lock:
			// time that passed meanwhile must not push the re-listen later.
			timer = clk.NewTimer(wakeAt.Sub(clk.Now()))
			// And if the clock moved on while the timer was armed (it counts
			// from the clock's time at arming), a wake time already passed
			// must not wait for the next tick.
			if !clk.Now().Before(wakeAt) {
				timer.Stop()
				continue
			}
			timerC = timer.C()
		}
		select {
		case <-timerC:
		case <-sh.wake:
		case r := <-sh.opened:
			mx.acknowledged(sh, r)
		case <-m.ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			mx.mu.Lock()
			if sh.cur != nil {
				sh.cur.cancel()
				sh.cur = nil
			}
			for _, s := range sh.subs {
				mx.dropLocked(s)
			}
			opening := sh.opening
			mx.mu.Unlock()
			if opening {
				r := <-sh.opened
				r.cancel()
				m.drain(r.ch)
			}
			return
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// openLocked starts a listen for every id of the shard.
func (mx *muxer) openLocked(sh *muxShard) {
	m := mx.m
	subs := make([]*muxSub, 0, len(sh.subs))
	ids := make([]string, 0, len(sh.subs))
	for id, s := range sh.subs {
		subs = append(subs, s)
		ids = append(ids, id)
	}
	sh.opening = true
	sh.dirtyAt = time.Time{}
	src := sh.g.src
	// The stream outlives the watcher that asked first: it belongs to the
	// manager.
	ctx, cancel := context.WithCancel(m.ctx)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ch, acked, err := src.ListenTasks(ctx, ids)
		if err != nil {
			cancel()
		}
		sh.opened <- muxOpened{subs: subs, ch: ch, acked: acked, err: err, cancel: cancel}
	}()
}

// acknowledged handles the end of a listen attempt.
func (mx *muxer) acknowledged(sh *muxShard, r muxOpened) {
	m := mx.m
	mx.mu.Lock()
	defer mx.mu.Unlock()
	sh.opening = false
	mx.changed.Broadcast()
	now := m.cfg.ListenClock.Now()
	if sh.waiting > 0 && sh.dirtyAt.IsZero() {
		sh.dirtyAt = now // ids that arrived while the listen was opening
	}
	if r.err != nil {
		// Every id it carried hears the error: the watchers poll and listen
		// again with their own backoff (M-14); the shard waits too.
		for _, s := range r.subs {
			if sh.subs[s.id] == s {
				mx.answerLocked(s, muxAnswer{err: r.err})
			}
		}
		sh.backoff = m.nextBackoff(sh.backoff, m.cfg.DefaultPollInterval)
		sh.after = now.Add(m.jitter(sh.backoff))
		return
	}
	mx.opened++
	sh.backoff = 0
	acked := make(map[string]bool, len(r.acked))
	for _, id := range r.acked {
		acked[id] = true
	}
	for _, s := range r.subs {
		if sh.subs[s.id] != s {
			continue
		}
		switch {
		case acked[s.id]:
			mx.answerLocked(s, muxAnswer{acked: true})
		case !s.answer:
			mx.answerLocked(s, muxAnswer{}) // M-15: not served, poll it
		default:
			// Served by the previous listen, left out of this one (the
			// task ended or expired upstream): its watcher polls.
			mx.dropLocked(s)
		}
	}
	ns := &muxStream{cancel: r.cancel, ch: r.ch}
	old := sh.cur
	sh.cur = ns
	if old != nil {
		old.cancel() // after the new one was acknowledged: no gap
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		mx.read(sh, ns)
	}()
}

// read dispatches one listen's notifications to the watchers of its shard.
func (mx *muxer) read(sh *muxShard, st *muxStream) {
	m := mx.m
	for t := range st.ch {
		if t == nil {
			continue
		}
		mx.mu.Lock()
		if sh.cur == st {
			if s := sh.subs[t.TaskID]; s != nil && s.answer && !s.closed {
				mx.deliverLocked(s, t)
			}
		}
		mx.mu.Unlock()
	}
	mx.mu.Lock()
	defer mx.mu.Unlock()
	if sh.cur != st {
		return // replaced (or closed) by us
	}
	// The listen ended (upstream restart, broken stream): its watchers poll
	// at once and listen again (M-14); the shard waits for its backoff.
	sh.cur = nil
	st.cancel()
	for _, s := range sh.subs {
		if s.answer {
			mx.dropLocked(s)
		}
	}
	now := m.cfg.ListenClock.Now()
	sh.backoff = m.nextBackoff(sh.backoff, m.cfg.DefaultPollInterval)
	sh.after = now.Add(m.jitter(sh.backoff))
	signal(sh.wake)
}

// deliverLocked hands t to s unless s already has that state (the same
// notification from the old and the new listen during a swap).
func (mx *muxer) deliverLocked(s *muxSub, t *modern.DetailedTask) {
	status := statusCode(t.Status)
	if status != 0 && s.status == status && s.updatedAt == t.LastUpdatedAt && s.message == t.StatusMessage {
		return
	}
	s.status, s.updatedAt, s.message = status, t.LastUpdatedAt, t.StatusMessage
	s.next = t // newest wins
	if s.w != nil {
		s.w.poke()
	}
}

// take returns the state delivered to s and not yet taken (newest wins),
// else whether its registration ended; ok is false when neither happened.
// Like a receive from a channel closed after its last value: the pending
// state first, then the end.
func (mx *muxer) take(s *muxSub) (t *modern.DetailedTask, open, ok bool) {
	mx.mu.Lock()
	defer mx.mu.Unlock()
	if t := s.next; t != nil {
		s.next = nil
		return t, true, true
	}
	return nil, false, s.closed
}

// Streams returns the number of shared listens open now and the number
// acknowledged since the manager started (tests, metrics).
func (m *Manager) Streams() (open, opened int) {
	mx := m.mux
	mx.mu.Lock()
	defer mx.mu.Unlock()
	for _, g := range mx.groups {
		for _, sh := range g.shards {
			if sh.cur != nil {
				open++
			}
		}
	}
	return open, mx.opened
}
