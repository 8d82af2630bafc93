package watch

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// watcher is the single goroutine that reads one upstream task.
type watcher struct {
	m      *Manager
	e      *entry
	src    Source
	pusher Pusher // nil: poll only (no support, disabled, or given up)
}

type listenResult struct {
	updates <-chan *modern.DetailedTask
	acked   bool
	err     error
}

// never is far enough in the future to mean "not scheduled".
const never = 1000 * time.Hour

func (w *watcher) run() {
	if w.m.cfg.Coord != nil {
		w.shared()
		return
	}
	w.lead(nil)
}

// outcome is how lead and follow end.
type outcome int

const (
	outDone outcome = iota // the watcher has stopped (terminal, idle, closed)
	outLost                // lead: the lease was lost; follow instead
	outTry                 // follow: try to take the lease now
)

// lead reads the upstream: alone (sh nil) or as the holder of the task's
// lease, renewing it and sharing every snapshot with the other replicas.
func (w *watcher) lead(sh *shared) outcome {
	m, cfg := w.m, &w.m.cfg
	clk := cfg.Clock
	id := w.e.key.TaskID
	ctx, cancel := context.WithCancel(m.ctx)
	defer cancel()

	seq := m.snapshot(w.e).Seq
	var share func(Snapshot)
	var remote <-chan []byte
	if sh != nil {
		// Above every seq the previous holder shared, so the followers'
		// "read now unless newer" requests compare against ours.
		seq = max(seq, sh.upSeq)
		share = func(s Snapshot) { sh.share(ctx, s, clk.Now()) }
		remote = sh.msgs
		sh.renewAt = clk.Now().Add(sh.ttl / 3)
		sh.greeted = false // should it follow again, it greets the new holder
	}
	start := clk.Now()
	nextPoll := start // the first read happens at once
	var backoff time.Duration
	asked := false // the next read was asked for (a kick)

	var (
		updates       <-chan *modern.DetailedTask // non-nil while notifications flow
		listening     chan listenResult           // non-nil while a listen attempt runs
		listenCancel  = func() {}
		nextListen    = start
		listenBackoff time.Duration
	)
	defer func() {
		m.setPushing(w.e, false)
		// End the subscription and make sure its request is over before the
		// watcher counts as stopped (Manager.Close waits for both).
		listenCancel()
		if listening != nil {
			r := <-listening
			m.drain(r.updates)
		}
		m.drain(updates)
	}()

	for {
		now := clk.Now()
		if w.retireIfIdle(now) {
			return outDone
		}
		if sh != nil && !now.Before(sh.renewAt) && !sh.renew(ctx, now) {
			return outLost
		}
		if !now.Before(nextPoll) {
			// A read someone waits for (Get, Refresh) skips the queue of
			// scheduled reads: another principal's tasks/get is not held
			// behind a burst of this process's cadence reads.
			var snap Snapshot
			var ok bool
			urgent := asked || len(w.e.kick) > 0
			offStack(func() {
				snap, ok = w.poll(ctx, &seq, urgent)
				if ok {
					m.publish(ctx, w.e, snap, share)
				}
			})
			asked = false
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
				backoff = m.nextBackoff(backoff, m.interval(snap.Task))
				nextPoll = now.Add(m.jitter(backoff))
			} else {
				backoff = 0
				// No jitter on the regular cadence: jitter could only make the
				// watcher poll faster than pollIntervalMs (M-24) or answer later
				// than one interval after completion. Watchers are already out
				// of step (tasks start at different times); jitter spreads the
				// retries after an outage, where herds form.
				nextPoll = now.Add(w.pollDelay(snap.Task, updates != nil))
			}
		}
		if w.pusher != nil && updates == nil && listening == nil && !now.Before(nextListen) {
			lctx, lcancel := context.WithCancel(ctx)
			listenCancel = lcancel
			listening = make(chan listenResult, 1)
			go func(p Pusher, out chan<- listenResult) {
				ch, acked, err := p.ListenTasks(lctx, []string{id})
				out <- listenResult{updates: ch, acked: slices.Contains(acked, id), err: err}
			}(w.pusher, listening)
		}

		wakeAt := nextPoll
		if w.pusher != nil && updates == nil && listening == nil && nextListen.Before(wakeAt) {
			wakeAt = nextListen
		}
		if at, ok := w.idleDeadline(); ok && at.Before(wakeAt) {
			wakeAt = at
		}
		if sh != nil && sh.renewAt.Before(wakeAt) {
			wakeAt = sh.renewAt
		}
		timer := clk.NewTimer(max(wakeAt.Sub(now), 0))
		select {
		case <-timer.C():
		case seen := <-w.e.kick:
			if seen >= seq { // no attempt finished since the caller looked
				nextPoll = clk.Now()
				asked = true
			}
		case <-w.e.wake:
		case raw, ok := <-remote:
			if !ok {
				remote, sh.msgs = nil, nil // resubscribed when leading ends
				break
			}
			if sh.leaderMessage(ctx, raw, seq, m.snapshot(w.e), clk.Now()) {
				nextPoll = clk.Now()
			}
		case r := <-listening:
			listening = nil
			now = clk.Now()
			switch {
			case r.err == nil && r.acked:
				updates = r.updates
				m.setPushing(w.e, true)
				listenBackoff = 0
				// Read once more: a change between the last read and the
				// acknowledgement would otherwise go unseen.
				nextPoll = now
			case r.err == nil:
				// Acknowledged without our task: this upstream does not push
				// it (M-15). Poll only.
				listenCancel()
				m.drain(r.updates)
				w.pusher = nil
			case cfg.Retryable(r.err):
				listenCancel()
				listenBackoff = m.nextBackoff(listenBackoff, cfg.DefaultPollInterval)
				nextListen = now.Add(m.jitter(listenBackoff))
			default:
				// -32601 or another refusal: no notifications/tasks here.
				cfg.Logger.Debug("watch: upstream offers no task notifications; polling", "upstream", w.e.key.Target, "err", r.err)
				listenCancel()
				w.pusher = nil
			}
		case t, ok := <-updates:
			now = clk.Now()
			if !ok {
				// The subscription ended (upstream restart, broken stream):
				// poll at once and listen again later (M-14).
				updates = nil
				m.setPushing(w.e, false)
				listenCancel()
				listenBackoff = m.nextBackoff(listenBackoff, cfg.DefaultPollInterval)
				nextListen = now.Add(m.jitter(listenBackoff))
				nextPoll = now
				break
			}
			if t == nil || t.TaskID != id {
				break
			}
			seq++
			snap := m.snapshot(w.e)
			snap.Task, snap.FetchedAt, snap.Seq, snap.Err, snap.Pushed, snap.Relayed = t, now, seq, nil, true, false
			offStack(func() { m.publish(ctx, w.e, snap, share) })
			if snap.Terminal() {
				timer.Stop()
				return outDone
			}
			backoff = 0
			nextPoll = now.Add(m.jitter(w.pollDelay(t, true)))
		case <-ctx.Done():
			timer.Stop()
			w.finish()
			return outDone
		}
		timer.Stop()
	}
}

// offStack runs f on a goroutine of its own and waits for it. A watcher
// lives as long as its task, parked most of the time; the deep calls of a
// read or a durable write (HTTP client, JSON, the store) would otherwise
// grow its stack for good, and with one watcher per watched task that stack
// is a large part of what a blocked wait costs.
func offStack(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// poll reads the task once; a read not asked for waits for one of the
// MaxConcurrentReads tokens first. ok is false when the watcher is being
// shut down.
func (w *watcher) poll(ctx context.Context, seq *uint64, asked bool) (Snapshot, bool) {
	m := w.m
	if !asked {
		select {
		case m.reads <- struct{}{}:
			defer func() { <-m.reads }()
		case <-ctx.Done():
			return Snapshot{}, false
		}
	}
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
