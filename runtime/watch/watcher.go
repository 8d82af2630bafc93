package watch

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/steps"
)

// watcher reads one upstream task. It is a state machine rather than a
// goroutine per task: while its task is pushed on a shared stream (or its
// next read is due later) and nothing else is pending, it parks: no
// goroutine, only a timer for the next scheduled step and the callbacks of
// the events that wake it (a notification or the end of its stream, a
// subscriber come or gone, a read asked for, shutdown). A burst of waits on
// thousands of distinct tasks then costs their records, not a stack each
// (docs/ARCHITECTURE.md, One watcher per upstream task). Under Config.Coord
// the watcher keeps its goroutine (the lease is renewed on its loop).
type watcher struct {
	m      *Manager
	e      *entry
	src    Source
	pusher Pusher // nil: poll only (no support, disabled, or given up)
	// session names the upstream session whose shared streams the watcher
	// joins (mux.go; they poke it at each delivery and at their end, so a
	// parked watcher hears them); "": a listen of its own.
	session string

	ls *leadState // the reading loop's state, kept while parked

	pmu sync.Mutex
	// wakeAt (since the heap's base time) and hidx (1-based; 0: none) are
	// the watcher's place in the Manager's timer heap while parked (under
	// Manager.timers.mu).
	hidx   int32
	parked bool
	dirty  bool // an event came while the loop ran: do not park on it
	wakeAt time.Duration
	// pokeC (cap 1) carries pokes to a loop blocked in a select (under a
	// coordinator, on a clock that cannot park, or during a listen of its
	// own); made at its first such select, so a watcher that only parks
	// has none.
	pokeC chan struct{}
}

// leadState is what the reading loop carries from one step to the next
// (kept while parked). What only a lease holder needs (its context, the
// other replicas' messages) lives in its shared record instead.
type leadState struct {
	seq      uint64
	nextPoll time.Time
	backoff  time.Duration
	asked    bool // the next read was asked for (a kick)
	// ticket is the watcher's place in the queue for a read token
	// (parking watchers only; nil: not queued).
	ticket *gateTicket

	updates <-chan *modern.DetailedTask // non-nil while a listen of its own flows
	// feed is the shared stream registration whose notifications flow
	// (taken with muxer.take when poked); nil: none.
	feed      *muxSub
	listening chan listenResult // non-nil while a listen attempt runs
	// registering is the shared stream's answer to this task's
	// registration (no goroutine waits for it); nil when none is
	// awaited.
	registering  <-chan muxAnswer
	listenCancel func()
	// unreg is the shared stream registration stopListen undoes (nil:
	// none; the one registering answers for); a field rather than a
	// closure over it, kept while parked.
	unreg         *muxSub
	nextListen    time.Time
	listenBackoff time.Duration
}

type listenResult struct {
	updates <-chan *modern.DetailedTask
	feed    *muxSub // a shared stream's registration instead of updates
	acked   bool
	err     error
}

// never is far enough in the future to mean "not scheduled".
const never = 1000 * time.Hour

// afterFuncer is a Clock that can run a function when a duration has passed
// (the wall clock can); a watcher parks only on such a clock.
type afterFuncer interface {
	AfterFunc(d time.Duration, f func()) FuncTimer
}

// run is the watcher's first step, taken in sl (see runtime/steps); it reports
// whether the watcher parked (it then still counts in Manager.wg, until it
// ends on a resumed step).
func (w *watcher) run(sl *steps.Slot) (parked bool) {
	if w.m.cfg.Coord != nil {
		sl.Detach() // keeps its goroutine: the lease is renewed on it
		w.shared()
		return false
	}
	return w.lead(nil, sl) == outParked
}

// outcome is how lead and follow end.
type outcome int

const (
	outDone   outcome = iota // the watcher has stopped (terminal, idle, closed)
	outLost                  // lead: the lease was lost; follow instead
	outTry                   // follow: try to take the lease now
	outParked                // lead (alone): parked until an event wakes it
)

// lead reads the upstream: alone (sh nil) or as the holder of the task's
// lease, renewing it and sharing every snapshot with the other replicas.
func (w *watcher) lead(sh *shared, sl *steps.Slot) outcome {
	m, clk := w.m, w.m.cfg.Clock
	// Alone, the watcher reads under the Manager's own context: nothing
	// outlives its loop but the listen, which has a cancel of its own, so a
	// cancelable context per watched task (its done channel and the map of
	// each read's timeout context, kept while parked) would buy nothing.
	ls := &leadState{listenCancel: func() {}}
	ls.seq = m.snapshot(w.e).Seq
	if sh != nil {
		sh.lctx, sh.lcancel = context.WithCancel(m.ctx)
		// Above every seq the previous holder shared, so the followers'
		// "read now unless newer" requests compare against ours.
		ls.seq = max(ls.seq, sh.upSeq)
		sh.renewAt = clk.Now().Add(sh.ttl / 3)
		sh.greeted = false // should it follow again, it greets the new holder
	}
	start := clk.Now()
	ls.nextPoll = start // the first read happens at once
	ls.nextListen = start
	w.ls = ls
	out := w.loop(sh, sl)
	if out != outParked {
		w.endLead(sh, sl)
	}
	return out
}

// leadCtx is the context the loop reads under: the Manager's alone (sh
// nil), the lease holding's own under a coordinator.
func (w *watcher) leadCtx(sh *shared) context.Context {
	if sh != nil {
		return sh.lctx
	}
	return w.m.ctx
}

// shareFunc hands snapshots to the other replicas (nil alone).
func (w *watcher) shareFunc(sh *shared) func(Snapshot) {
	if sh == nil {
		return nil
	}
	return func(s Snapshot) { sh.share(sh.lctx, s, w.m.cfg.Clock.Now()) }
}

// endLead ends the reading loop: the subscription ends and its request is
// over before the watcher counts as stopped (Manager.Close waits for both).
func (w *watcher) endLead(sh *shared, sl *steps.Slot) {
	m, ls := w.m, w.ls
	if sh != nil {
		sh.lcancel()
	}
	m.setPushing(w.e, false)
	if ls.ticket != nil {
		m.reads.abandon(ls.ticket)
		ls.ticket = nil
	}
	w.stopListen()
	if ls.listening != nil {
		sl.Detach() // the listen's request may take its time to end
		r := <-ls.listening
		m.drain(r.updates)
	}
	m.drain(ls.updates)
}

// stopListen ends the watcher's listen or shared stream registration (a
// registration already dropped is left alone).
func (w *watcher) stopListen() {
	if s := w.ls.unreg; s != nil {
		w.m.mux.unregister(s)
	}
	w.ls.listenCancel()
}

// resume runs a parked watcher's loop again, as a step in sl.
func (w *watcher) resume(sl *steps.Slot) {
	if w.loop(nil, sl) != outParked {
		w.endLead(nil, sl)
		w.m.wg.Done()
	}
}

// poke tells the watcher that an event is pending: a parked watcher resumes,
// a running one does not park before it looked again.
func (w *watcher) poke() {
	w.pmu.Lock()
	if !w.parked {
		w.dirty = true
		c := w.pokeC
		w.pmu.Unlock()
		if c != nil {
			signal(c)
		}
		return
	}
	w.parked = false
	w.m.parkedMoved(-1)
	w.m.unschedule(w)
	w.pmu.Unlock()
	w.m.steps.Run(w.resume)
}

// pokeChan returns the channel that carries pokes to a blocking select,
// making it at the first call. Made before the caller looks at the entry's
// signals, so a signal set after that look is heard on it.
func (w *watcher) pokeChan() <-chan struct{} {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	if w.pokeC == nil {
		w.pokeC = make(chan struct{}, 1)
	}
	return w.pokeC
}

// takeSignals consumes the entry's pending signals at the top of a step: a
// read asked for (Get, Refresh) unless an attempt finished after the
// asker's look; "subscribers changed" needs nothing more than the step
// itself (its idle check).
func (w *watcher) takeSignals(now time.Time) {
	w.e.woken.Store(false)
	if seen, ok := w.e.takeKick(); ok && seen >= w.ls.seq {
		w.ls.nextPoll = now
		w.ls.asked = true
	}
}

// park leaves the loop until wakeAt or the next event; false when an event
// came meanwhile (the loop looks again).
func (w *watcher) park(af afterFuncer, wakeAt time.Time) bool {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	if w.dirty {
		w.dirty = false
		return false
	}
	w.parked = true
	// Shutdown reaches a parked watcher through Manager.Close, which pokes
	// every watcher after cancelling their contexts.
	w.m.schedule(w, af, wakeAt)
	// Counted once its wake time is in the heap (whose lock a burst of
	// parking watchers may queue on): only the goroutine's return is left.
	w.m.parkedMoved(1)
	return true
}

// event is one thing the loop waits for.
type event struct {
	kind int
	raw  []byte
	ok   bool
	r    listenResult
	a    muxAnswer
	t    *modern.DetailedTask
}

const (
	evTimer = iota
	evWake
	evRemote
	evListen
	evUpdate
	evDone
	evRegistered
)

// loop runs the watcher's steps until it stops, loses the lease or parks;
// sl is the place it runs in on the Manager's steps (nil: none).
func (w *watcher) loop(sh *shared, sl *steps.Slot) outcome {
	m, cfg := w.m, &w.m.cfg
	clk := cfg.Clock
	ls := w.ls
	ctx := w.leadCtx(sh)
	af, _ := clk.(afterFuncer)
	parking := af != nil && sh == nil
	offStack := offStack
	if parking {
		offStack = inline
	}
	for {
		now := clk.Now()
		// Taken first, so the checks below see what a signal announced;
		// one set later pokes the watcher again (pending, dirty).
		w.takeSignals(now)
		if w.retireIfIdle(now) {
			return outDone
		}
		if sh != nil && !now.Before(sh.renewAt) && !sh.renew(ctx, now) {
			return outLost
		}
		// A read someone waits for (Get, Refresh) skips the queue of
		// scheduled reads: another principal's tasks/get is not held
		// behind a burst of this process's cadence reads.
		urgent := ls.asked
		gate := gateWait
		if !now.Before(ls.nextPoll) {
			switch {
			case urgent:
				gate = gateSkip
				if ls.ticket != nil {
					m.reads.abandon(ls.ticket)
					ls.ticket = nil
				}
			case parking && ls.ticket == nil:
				// A parking watcher queues for its token rather than
				// blocking a goroutine on it.
				if t, ok := m.reads.acquire(w.poke); ok {
					gate = gateHeld
				} else {
					ls.ticket = t
				}
			case parking && m.reads.granted(ls.ticket):
				gate, ls.ticket = gateHeld, nil
			}
		}
		if !now.Before(ls.nextPoll) && ls.ticket == nil {
			var snap Snapshot
			var ok bool
			offStack(func() {
				snap, ok = w.poll(ctx, &ls.seq, gate, sl)
				if ok {
					m.publish(ctx, w.e, snap, w.shareFunc(sh))
				}
			})
			ls.asked = false
			if !ok {
				w.finish()
				return outDone
			}
			if snap.Terminal() {
				return outDone // M-25: nothing more to read (publish retired the watcher)
			}
			now = clk.Now()
			if snap.Err != nil {
				// Outage or refusal: keep the record, retry with backoff.
				ls.backoff = m.nextBackoff(ls.backoff, m.interval(snap.Task))
				ls.nextPoll = now.Add(m.jitter(ls.backoff))
			} else {
				ls.backoff = 0
				// No jitter on the regular cadence: jitter could only make the
				// watcher poll faster than pollIntervalMs (M-24) or answer later
				// than one interval after completion. Watchers are already out
				// of step (tasks start at different times); jitter spreads the
				// retries after an outage, where herds form.
				ls.nextPoll = now.Add(w.pollDelay(snap.Task, ls.flowing()))
			}
		}
		if w.pusher != nil && w.session != "" && !ls.flowing() && ls.registering == nil && !now.Before(ls.nextListen) {
			// Join the session's shared stream; its answer comes as an
			// event (mux.go), so nothing waits for it.
			s, ready := m.mux.register(muxKey{target: w.e.key.Target, session: w.session}, w.pusher, w.e.key.TaskID, w)
			ls.registering, ls.unreg = ready, s
		} else if w.pusher != nil && w.session == "" && !ls.flowing() && ls.listening == nil && !now.Before(ls.nextListen) {
			lctx, lcancel := context.WithCancel(ctx)
			ls.listenCancel, ls.unreg = lcancel, nil
			ls.listening = make(chan listenResult, 1)
			id := w.e.key.TaskID
			go func(p Pusher, out chan<- listenResult) {
				ch, acked, err := p.ListenTasks(lctx, []string{id})
				out <- listenResult{updates: ch, acked: slices.Contains(acked, id), err: err}
			}(w.pusher, ls.listening)
		}

		wakeAt := ls.nextPoll
		if ls.ticket != nil {
			wakeAt = now.Add(never) // the read waits for its token (poke)
		}
		if w.pusher != nil && !ls.flowing() && ls.listening == nil && ls.registering == nil && ls.nextListen.Before(wakeAt) {
			wakeAt = ls.nextListen
		}
		if at, ok := w.idleDeadline(); ok && at.Before(wakeAt) {
			wakeAt = at
		}
		if sh != nil && sh.renewAt.Before(wakeAt) {
			wakeAt = sh.renewAt
		}
		var ev event
		parkable := af != nil && sh == nil && ls.listening == nil && ls.updates == nil
		var pc <-chan struct{}
		if !parkable {
			pc = w.pokeChan()
			if w.e.pending() {
				continue // set before pokeC existed: take it now
			}
		}
		if ls.feed != nil {
			// After pokeC exists: a delivery after this look pokes it (or,
			// parkable, marks the watcher dirty so it does not park).
			if t, open, ok := m.mux.take(ls.feed); ok {
				if out, stop := w.handle(sh, event{kind: evUpdate, t: t, ok: open}, offStack); stop {
					return out
				}
				continue
			}
		}
		if parkable {
			// Nothing runs for the watcher but what an event or its timer
			// starts: look at what is pending, else park.
			select {
			case ev.t, ev.ok = <-ls.updates:
				ev.kind = evUpdate
			case ev.a = <-ls.registering:
				ev.kind = evRegistered
			case <-ctx.Done():
				ev.kind = evDone
			default:
				if !clk.Now().Before(wakeAt) {
					continue
				}
				if w.park(af, wakeAt) {
					return outParked
				}
				continue
			}
		} else {
			// Blocks until an event: not as one of the Manager's steps.
			sl.Detach()
			var remote <-chan []byte // the other replicas' messages (lease holder)
			if sh != nil {
				remote = sh.msgs
			}
			timer := clk.NewTimer(max(wakeAt.Sub(now), 0))
			select {
			case <-timer.C():
				ev.kind = evTimer
			case <-pc:
				ev.kind = evWake
			case ev.raw, ev.ok = <-remote:
				ev.kind = evRemote
			case ev.r = <-ls.listening:
				ev.kind = evListen
			case ev.t, ev.ok = <-ls.updates:
				ev.kind = evUpdate
			case ev.a = <-ls.registering:
				ev.kind = evRegistered
			case <-ctx.Done():
				ev.kind = evDone
			}
			timer.Stop()
		}
		if out, stop := w.handle(sh, ev, offStack); stop {
			return out
		}
	}
}

// handle applies one event to the loop's state; stop: the loop ends.
// offStack is the loop's: inline for a parking watcher, whose goroutine ends
// at its next park anyway.
func (w *watcher) handle(sh *shared, ev event, offStack func(func())) (outcome, bool) {
	m, cfg := w.m, &w.m.cfg
	clk := cfg.Clock
	ls := w.ls
	ctx := w.leadCtx(sh)
	id := w.e.key.TaskID
	if ev.kind == evRegistered {
		// As a listen of its own answers once acknowledged (or refused).
		s := ls.unreg
		ls.registering = nil
		var r listenResult
		if ev.a.err == nil && ev.a.acked {
			r = listenResult{feed: s, acked: true}
		} else {
			w.stopListen()
			ls.listenCancel, ls.unreg = func() {}, nil
			r = listenResult{err: ev.a.err}
		}
		ev = event{kind: evListen, r: r}
	}
	switch ev.kind {
	case evRemote:
		if !ev.ok {
			sh.msgs = nil // resubscribed when leading ends
			break
		}
		if sh.leaderMessage(ctx, ev.raw, ls.seq, m.snapshot(w.e), clk.Now()) {
			ls.nextPoll = clk.Now()
		}
	case evListen:
		r := ev.r
		ls.listening = nil
		now := clk.Now()
		switch {
		case r.err == nil && r.acked:
			ls.updates, ls.feed = r.updates, r.feed
			m.setPushing(w.e, true)
			ls.listenBackoff = 0
			// Read once more: a change between the last read and the
			// acknowledgement would otherwise go unseen.
			ls.nextPoll = now
		case r.err == nil:
			// Acknowledged without our task: this upstream does not push
			// it (M-15). Poll only.
			w.stopListen()
			m.drain(r.updates)
			w.pusher = nil
		case cfg.Retryable(r.err):
			w.stopListen()
			ls.listenBackoff = m.nextBackoff(ls.listenBackoff, cfg.DefaultPollInterval)
			ls.nextListen = now.Add(m.jitter(ls.listenBackoff))
		default:
			// -32601 or another refusal: no notifications/tasks here.
			cfg.Logger.Debug("watch: upstream offers no task notifications; polling", "upstream", w.e.key.Target, "err", r.err)
			w.stopListen()
			w.pusher = nil
		}
	case evUpdate:
		now := clk.Now()
		if !ev.ok {
			// The subscription ended (upstream restart, broken stream):
			// poll at once and listen again later (M-14).
			ls.updates, ls.feed = nil, nil
			m.setPushing(w.e, false)
			w.stopListen()
			ls.listenBackoff = m.nextBackoff(ls.listenBackoff, cfg.DefaultPollInterval)
			ls.nextListen = now.Add(m.jitter(ls.listenBackoff))
			ls.nextPoll = now
			break
		}
		t := ev.t
		if t == nil || t.TaskID != id {
			break
		}
		ls.seq++
		snap := m.snapshot(w.e)
		snap.Task, snap.FetchedAt, snap.Seq, snap.Err, snap.Pushed, snap.Relayed = t, now, ls.seq, nil, true, false
		offStack(func() { m.publish(ctx, w.e, snap, w.shareFunc(sh)) })
		if snap.Terminal() {
			return outDone, true
		}
		ls.backoff = 0
		ls.nextPoll = now.Add(m.jitter(w.pollDelay(t, true)))
	case evDone:
		w.finish()
		return outDone, true
	}
	return 0, false
}

// flowing reports whether the task's notifications flow (a listen of its
// own or a shared stream, acknowledged).
func (ls *leadState) flowing() bool { return ls.updates != nil || ls.feed != nil }

// offStack runs f on a goroutine of its own and waits for it. A watcher that
// keeps its goroutine (see watcher) lives as long as its task, blocked most
// of the time; the deep calls of a read or a durable write (HTTP client,
// JSON, the store) would otherwise grow its stack for good, and with one
// watcher per watched task that stack is a large part of what a blocked wait
// costs. A parking watcher's goroutine ends at its next park: it calls f
// itself (inline).
func inline(f func()) { f() }

func offStack(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// How poll treats the read tokens (Config.MaxConcurrentReads).
const (
	gateWait = iota // wait for a token (a scheduled read)
	gateSkip        // none: a read someone waits for
	gateHeld        // the caller holds one: poll releases it
)

// poll reads the task once; a scheduled read holds one of the
// MaxConcurrentReads tokens while it runs. ok is false when the watcher is
// being shut down. The read is not one of the Manager's steps (sl).
func (w *watcher) poll(ctx context.Context, seq *uint64, gate int, sl *steps.Slot) (Snapshot, bool) {
	m := w.m
	switch gate {
	case gateWait:
		if !m.reads.wait(ctx) {
			return Snapshot{}, false
		}
		defer m.reads.release()
	case gateHeld:
		defer m.reads.release()
	}
	sl.Detach()
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	t, err := w.src.GetTask(rctx, w.e.key.TaskID)
	cancel()
	if ctx.Err() != nil {
		return Snapshot{}, false
	}
	*seq++
	snap := m.snapshot(w.e)
	snap.Seq, snap.Pushed, snap.Relayed = *seq, false, false
	switch gone := goneError(err); {
	case err == nil && t != nil:
		snap.Task, snap.FetchedAt, snap.Err = t, m.cfg.Clock.Now(), nil
	case gone != nil:
		// M-27: unknown or expired upstream; nothing more will come.
		snap.Gone, snap.Err = gone, nil
	case err == nil:
		snap.Err = errors.New("watch: upstream returned no task")
	default:
		snap.Err = err
		m.cfg.Logger.Debug("watch: tasks/get failed; backing off", "upstream", w.e.key.Target, "task", w.e.key.TaskID, "err", err)
	}
	return snap, true
}

// goneError returns the upstream's own -32602 (task not found or expired).
// Transport errors never count: they unwrap to -32603 first.
func goneError(err error) *rpc.Error {
	var e *rpc.Error
	if errors.As(err, &e) && e.Code == rpc.CodeInvalidParams {
		return e
	}
	return nil
}

// pollDelay is the wait before the next read after a good one.
func (w *watcher) pollDelay(t *modern.DetailedTask, pushing bool) time.Duration {
	if pushing {
		if w.m.cfg.PushPollInterval < 0 {
			return never
		}
		return w.m.cfg.PushPollInterval
	}
	return w.m.interval(t)
}

// idleDeadline is when an unwatched watcher stops; ok is false while it has
// subscribers.
func (w *watcher) idleDeadline() (time.Time, bool) {
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(w.e.subs) > 0 || w.e.idleAt.IsZero() {
		return time.Time{}, false
	}
	return w.e.idleAt.Add(max(m.cfg.IdleTimeout, 0)), true
}

// retireIfIdle stops the watcher when nobody has watched it for IdleTimeout.
func (w *watcher) retireIfIdle(now time.Time) bool {
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	e := w.e
	if len(e.subs) > 0 || e.idleAt.IsZero() || now.Before(e.idleAt.Add(max(m.cfg.IdleTimeout, 0))) {
		return false
	}
	e.running = false
	if m.entries[e.key] == e {
		delete(m.entries, e.key)
	}
	return true
}

// finish marks the watcher stopped; an entry nobody watches is dropped, one
// with subscribers keeps its final snapshot for them and for late attachers.
func (w *watcher) finish() {
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	e := w.e
	e.running = false
	if len(e.subs) == 0 && m.entries[e.key] == e {
		delete(m.entries, e.key)
	}
}

// drain consumes ch until it closes (the subscription's request has ended),
// off the watcher's goroutine but counted by Manager.Close.
func (m *Manager) drain(ch <-chan *modern.DetailedTask) {
	if ch == nil {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for range ch {
		}
	}()
}
