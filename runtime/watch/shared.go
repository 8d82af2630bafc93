package watch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/coord"
)

// One watcher per task across replicas (docs/ARCHITECTURE.md, One watcher
// per upstream task, and Replica takeover; with Config.Coord): every replica with subscribers runs a watcher for the task,
// but only the one holding the task's lease reads the upstream. It shares
// each snapshot on the task's topic; the others relay those to their own
// subscribers, forward their "read now" requests to the holder, and try to
// take the lease every third of its period, so a holder that died (stopped
// renewing) is replaced within two periods. A holder that stops for any
// other reason (terminal, idle, shutdown) releases the lease and says so,
// and a follower with subscribers takes over at once.

// wireMsg is what replicas tell each other about one task.
type wireMsg struct {
	// Kind: "snap" (a snapshot), "hello" (a follower joined: share the
	// latest), "kick" (read now unless an attempt after Seq finished),
	// "release" (the holder stopped).
	Kind string `json:"k"`
	// From is the sender's lease token (messages from oneself are skipped).
	From string `json:"f"`
	// Seq is the holder's snapshot seq ("snap") or the newest one the
	// follower saw ("kick").
	Seq    uint64               `json:"s,omitempty"`
	Task   *modern.DetailedTask `json:"t,omitempty"`
	AgeMs  int64                `json:"a,omitempty"` // how old Task was when shared
	Err    string               `json:"e,omitempty"`
	Gone   *rpc.Error           `json:"g,omitempty"`
	Pushed bool                 `json:"p,omitempty"`
}

const (
	kindSnap    = "snap"
	kindHello   = "hello"
	kindKick    = "kick"
	kindRelease = "release"
)

// shared is a watcher's part in the coordination of its task.
type shared struct {
	w     *watcher
	name  string // lease name and topic
	token string // this watcher's lease token
	ttl   time.Duration
	msgs  <-chan []byte // nil while not subscribed
	unsub func()
	// greeted: a hello went out on the current subscription (one is
	// enough: the holder shares everything after it).
	greeted bool

	renewAt time.Time // lead: next renewal (watcher clock)
	// lctx (cancelled by lcancel when leading ends) is what the holder
	// reads under.
	lctx    context.Context
	lcancel context.CancelFunc
	upFrom  string // follow: the holder whose snapshots were relayed last
	upSeq   uint64 // and its newest seq
}

// coordName is the lease name and topic of key: a hash, so that neither the
// upstream's URL nor its task id appears in Redis key names.
func coordName(key Key) string {
	h := sha256.Sum256([]byte(key.Target + "\x00" + key.TaskID))
	return "watch:" + hex.EncodeToString(h[:16])
}

// shared runs the watcher under Config.Coord: it leads while it holds the
// lease and follows otherwise, until its task ends or nobody here watches it.
func (w *watcher) shared() {
	m := w.m
	sh := &shared{w: w, name: coordName(w.e.key), token: coord.NewToken(m.cfg.Replica), ttl: m.cfg.LeaseTTL}
	defer func() {
		if sh.unsub != nil {
			sh.unsub()
		}
	}()
	for {
		if m.ctx.Err() != nil {
			w.finish()
			return
		}
		sh.subscribe()
		ok, err := sh.acquire()
		if err != nil {
			m.cfg.Logger.Debug("watch: cannot take a task's lease; following", "upstream", w.e.key.Target, "err", err)
		}
		if ok {
			out := w.lead(sh, nil)
			if out == outDone {
				sh.release()
				return
			}
			m.cfg.Logger.Info("watch: another replica took over a task's lease; following it", "upstream", w.e.key.Target)
		}
		if w.follow(sh) == outDone {
			return
		}
	}
}

// subscribe joins the task's topic (before acquiring: a snapshot shared
// after another replica won the lease is never missed).
func (sh *shared) subscribe() {
	if sh.msgs != nil {
		return
	}
	if sh.unsub != nil {
		sh.unsub()
		sh.unsub = nil
	}
	m := sh.w.m
	ctx, cancel := context.WithTimeout(m.ctx, m.cfg.RequestTimeout)
	defer cancel()
	msgs, unsub, err := m.cfg.Coord.Subscribe(ctx, sh.name)
	if err != nil {
		m.cfg.Logger.Debug("watch: cannot subscribe to other replicas' task snapshots; retrying", "err", err)
		return
	}
	sh.msgs, sh.unsub, sh.greeted = msgs, unsub, false
}

func (sh *shared) acquire() (bool, error) {
	m := sh.w.m
	ctx, cancel := context.WithTimeout(m.ctx, m.cfg.RequestTimeout)
	defer cancel()
	return m.cfg.Coord.Acquire(ctx, sh.name, sh.token, sh.ttl)
}

// renew extends the lease; false when it was lost. A failed renewal (the
// coordinator unreachable) keeps leading: no other replica can take the
// lease from an unreachable Redis either, and the next renewal tells.
func (sh *shared) renew(ctx context.Context, now time.Time) bool {
	m := sh.w.m
	sh.renewAt = now.Add(sh.ttl / 3)
	rctx, cancel := context.WithTimeout(ctx, sh.ttl/3)
	defer cancel()
	ok, err := m.cfg.Coord.Renew(rctx, sh.name, sh.token, sh.ttl)
	if err != nil {
		// Debug: an unreachable Redis is reported once by the store and
		// /readyz, not once per task every renewal.
		m.cfg.Logger.Debug("watch: cannot renew a task's lease; still reading the upstream", "err", err)
		return true
	}
	return ok
}

// release gives the lease up and tells the followers, so one with
// subscribers takes over at once (shutdown, idle; after a terminal state
// they have it already).
func (sh *shared) release() {
	m := sh.w.m
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := m.cfg.Coord.Release(ctx, sh.name, sh.token); err != nil {
		m.cfg.Logger.Debug("watch: cannot release a task's lease; it expires by itself", "err", err)
		return
	}
	sh.send(ctx, wireMsg{Kind: kindRelease})
}

// send publishes msg on the task's topic.
func (sh *shared) send(ctx context.Context, msg wireMsg) {
	m := sh.w.m
	msg.From = sh.token
	raw, err := json.Marshal(msg)
	if err == nil {
		// Bounded like a renewal: an unreachable Redis must not hold the
		// holder's reads back for long.
		pctx, cancel := context.WithTimeout(ctx, min(sh.ttl/3, m.cfg.RequestTimeout))
		err = m.cfg.Coord.Publish(pctx, sh.name, raw)
		cancel()
	}
	if err != nil && ctx.Err() == nil {
		m.cfg.Logger.Debug("watch: cannot share with other replicas", "kind", msg.Kind, "err", err)
	}
}

// share sends a snapshot the holder published to the followers.
func (sh *shared) share(ctx context.Context, s Snapshot, now time.Time) {
	msg := wireMsg{Kind: kindSnap, Seq: s.Seq, Task: s.Task, Gone: s.Gone, Pushed: s.Pushed}
	if s.Err != nil {
		msg.Err = s.Err.Error()
	}
	if s.Task != nil && !s.FetchedAt.IsZero() {
		msg.AgeMs = max(now.Sub(s.FetchedAt).Milliseconds(), 0)
	}
	sh.send(ctx, msg)
}

// leaderMessage handles a message while leading; true asks for a read now.
func (sh *shared) leaderMessage(ctx context.Context, raw []byte, seq uint64, cur Snapshot, now time.Time) bool {
	if raw == nil {
		// Our subscription was re-established: followers may have missed
		// snapshots too.
		if cur.Seq > 0 {
			sh.share(ctx, cur, now)
		}
		return false
	}
	var msg wireMsg
	if json.Unmarshal(raw, &msg) != nil || msg.From == sh.token {
		return false
	}
	switch msg.Kind {
	case kindHello:
		if cur.Seq > 0 {
			sh.share(ctx, cur, now)
		}
	case kindKick:
		return msg.Seq >= seq
	}
	return false
}

// follow relays the holder's snapshots to this replica's subscribers until
// the watcher stops (outDone) or it is time to try the lease (outTry).
func (w *watcher) follow(sh *shared) outcome {
	m, clk := w.m, w.m.cfg.Clock
	ctx := m.ctx
	if !sh.greeted && sh.msgs != nil {
		sh.send(ctx, wireMsg{Kind: kindHello})
		sh.greeted = true
	}
	nextTry := clk.Now().Add(sh.ttl / 3)
	// The poke channel exists before the entry's signals are first taken,
	// so a signal set after a look wakes the select below.
	pc := w.pokeChan()
	for {
		// "Subscribers changed" needs only this step's idle check.
		w.e.woken.Store(false)
		if _, ok := w.e.takeKick(); ok {
			// A reader wants a fresh state: the holder reads unless it
			// already has one newer than what we relayed.
			sh.send(ctx, wireMsg{Kind: kindKick, Seq: sh.upSeq})
		}
		now := clk.Now()
		if w.retireIfIdle(now) {
			return outDone
		}
		if !now.Before(nextTry) || sh.msgs == nil && sh.unsub != nil {
			return outTry
		}
		wakeAt := nextTry
		if at, ok := w.idleDeadline(); ok && at.Before(wakeAt) {
			wakeAt = at
		}
		timer := clk.NewTimer(max(wakeAt.Sub(now), 0))
		select {
		case <-timer.C():
		case <-pc:
		case raw, ok := <-sh.msgs:
			if !ok {
				sh.msgs = nil
				timer.Stop()
				return outTry
			}
			if raw == nil {
				sh.send(ctx, wireMsg{Kind: kindHello}) // resubscribed: ask again
				break
			}
			var msg wireMsg
			if json.Unmarshal(raw, &msg) != nil || msg.From == sh.token {
				break
			}
			switch msg.Kind {
			case kindRelease:
				timer.Stop()
				return outTry
			case kindSnap:
				if msg.From == sh.upFrom && msg.Seq <= sh.upSeq {
					break // a repeat (hello answered twice)
				}
				sh.upFrom, sh.upSeq = msg.From, msg.Seq
				snap := relayed(m.snapshot(w.e), msg, clk.Now())
				m.publish(ctx, w.e, snap, nil)
				if snap.Terminal() {
					timer.Stop()
					return outDone
				}
			}
		case <-ctx.Done():
			timer.Stop()
			w.finish()
			return outDone
		}
		timer.Stop()
	}
}

// relayed is the local snapshot for a snapshot the holder shared: the
// holder's state, this replica's seq, and its age on this replica's clock
// (clocks of two hosts are never compared).
func relayed(prev Snapshot, msg wireMsg, now time.Time) Snapshot {
	s := prev
	s.Seq++
	s.Pushed, s.Relayed, s.Err = msg.Pushed, true, nil
	if msg.Task != nil {
		s.Task = msg.Task
		s.FetchedAt = now.Add(-time.Duration(msg.AgeMs) * time.Millisecond)
	}
	if msg.Gone != nil {
		s.Gone = msg.Gone
	}
	if msg.Err != "" {
		s.Err = errors.New(msg.Err)
	}
	return s
}
