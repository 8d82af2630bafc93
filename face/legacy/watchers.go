package legacyface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// binding ties an upstream task (a watcher key) to the local record it feeds
// and to the upstream options its requests carry (the owner's credentials
// and capabilities). It is rebuilt lazily after a restart, from the first
// request that touches the task.
type binding struct {
	scope   sessionmap.Scope
	localID string

	mu   sync.Mutex
	opts *modernup.CallOptions // immutable: a rebind swaps the pointer
}

func (b *Bridge) keyOf(rec sessionmap.Task) watch.Key {
	return watch.Key{Target: b.target, TaskID: rec.UpstreamTaskID}
}

// bind registers (or refreshes) the binding of rec with the options of the
// current request, and returns the watcher key.
func (s *session) bind(rec sessionmap.Task, opts modernup.CallOptions) watch.Key {
	return s.b.bind(rec, s.shareOpts(opts))
}

// bind is session.bind with options already shared (immutable, without
// OnNotify).
func (b *Bridge) bind(rec sessionmap.Task, opts *modernup.CallOptions) watch.Key {
	key := b.keyOf(rec)
	if opts == nil {
		opts = &noOptions // a hub whose task had no binding, as before
	}
	v, loaded := b.bindings.LoadOrStore(key, &binding{scope: rec.Scope, localID: rec.ID, opts: opts})
	if loaded {
		bd := v.(*binding)
		bd.mu.Lock()
		bd.opts = opts
		bd.mu.Unlock()
	}
	return key
}

// noOptions are the options of a binding made without any (never modified).
var noOptions modernup.CallOptions

func (b *Bridge) binding(key watch.Key) *binding {
	v, ok := b.bindings.Load(key)
	if !ok {
		return nil
	}
	return v.(*binding)
}

// attach subscribes to key's watcher. The subscription is ended only by its
// Close (callers defer it), never by a context: runtime/watch registers the
// context hook after Attach returns without synchronisation, so a context
// cancelled at that moment races with it.
func (b *Bridge) attach(key watch.Key) (*watch.Subscription, error) {
	return b.watch.Attach(context.Background(), key)
}

// watchGet is watch.Manager.Get (the cached read, refreshed only when older
// than the task's poll interval) for a caller whose ctx may be cancelled:
// Get itself runs with a context that is never cancelled (see attach; it
// returns once the watcher publishes, bounded by the request timeout), and
// the caller stops waiting when ctx ends.
//
// A refresh is waited for freshWait at most: a stalled upstream then gets
// a tasks/get answered from the latest state the bridge has (the watcher's,
// pushed by the upstream, M-33, or polled earlier), not held until the
// watcher's request times out; errNoFreshState when the watcher has none
// (it just started), and the caller answers from the record.
func (b *Bridge) watchGet(ctx context.Context, key watch.Key) (watch.Snapshot, error) {
	type got struct {
		snap watch.Snapshot
		err  error
	}
	ch := make(chan got, 1)
	go func() {
		base := context.WithoutCancel(ctx)
		fctx, cancel := context.WithTimeout(base, freshWait)
		snap, err := b.watch.Get(fctx, key, 0)
		// Get ends on fctx's deadline either way: with the deadline, or
		// with its subscription closed by it; both return the cached state.
		late := err != nil && fctx.Err() != nil
		cancel()
		if late {
			err = nil // the latest state known
			if snap.Task == nil && snap.Gone == nil {
				err = errNoFreshState
			}
		}
		ch <- got{snap, err}
	}()
	select {
	case g := <-ch:
		return g.snap, g.err
	case <-ctx.Done():
		return watch.Snapshot{}, ctx.Err()
	}
}

// errNoFreshState: the upstream did not answer within freshWait and the
// watcher knows no state of the task yet.
var errNoFreshState = errors.New("face: the upstream did not answer in time")

// freshWait is how long a read waits for a fresher state of a task whose
// state the bridge knows (watchGet): a healthy upstream answers tasks/get
// well within it.
const freshWait = time.Second

// watchSource is the watchers' Source hook.
func (b *Bridge) watchSource(key watch.Key) (watch.Source, error) {
	bd := b.binding(key)
	if bd == nil {
		return nil, fmt.Errorf("face: no binding for an upstream task of %s", key.Target)
	}
	bd.mu.Lock()
	opts := bd.opts
	bd.mu.Unlock()
	return credSource{b: b, principal: bd.scope.Principal, opts: opts}, nil // opts is shared, immutable
}

// PushSession makes the watchers of one principal share their
// subscriptions/listen streams (runtime/watch's multiplexer): a stream is
// opened through withCredential with that principal's freshest credential
// and carries only that principal's tasks. Without a principal the
// credential the task was bound with names the session, so anonymous
// callers with different credentials never share one.
func (c credSource) PushSession() string {
	return watch.SessionOf(c.principal, c.opts.Authorization)
}

var _ watch.SessionPusher = credSource{}

// observe is the watchers' Sink: every snapshot with news is merged into the
// durable record (monotonic: terminal sticks, a pinned cancel wins,
// L-26, L-59). Non-terminal snapshots are recorded before any waiter sees
// them. A terminal one reaches the waiters first (watch.Config.EarlyTerminal)
// and is recorded right after, so a completion is not answered one durable
// write late. That is safe: a terminal upstream state never changes (the
// record would end the same), reads between the answer and the write see
// the snapshot (withTerminal), a pinned cancel still wins in both, and a
// crash before the write loses nothing the client cannot get again: the
// record is still live, so the next request reads the terminal state from
// the upstream, which keeps it for the task's ttl.
//
// A relayed snapshot (several replicas, watch.Config.Coord) was recorded by
// the replica holding the task's lease, which also audits the task's end:
// this replica only drops its own bookkeeping once the task is over.
func (b *Bridge) observe(ctx context.Context, key watch.Key, snap watch.Snapshot) error {
	bd := b.binding(key)
	if bd == nil {
		return nil
	}
	if snap.Relayed {
		if snap.Terminal() {
			b.forgetSent(bd.localID)
			b.bindings.Delete(key)
		}
		return nil
	}
	var sn sessionmap.Snapshot
	switch {
	case snap.Gone != nil:
		sn, _ = b.terminalSnapshot(snap)
	case snap.Task != nil:
		var err error
		if sn, err = snapshotOf(snap.Task); err != nil {
			return err
		}
		// Observed now, at the store's clock (see newRecord); the
		// watcher's clock may be injected.
		sn.LastUpdatedAt = time.Now()
	default:
		return nil
	}
	rec, err := b.store.UpdateStatus(ctx, bd.scope, bd.localID, sn)
	if err != nil {
		if errors.Is(err, sessionmap.ErrNotFound) {
			return nil // expired locally
		}
		return fmt.Errorf("face: record task snapshot: %w", err)
	}
	if rec.Status.Terminal() {
		b.taskEnded(rec)
		b.forgetSent(rec.ID)
		b.bindings.Delete(key) // nothing will be read upstream any more
	}
	return nil
}

func snapshotOf(d *modern.DetailedTask) (sessionmap.Snapshot, error) {
	sn := sessionmap.Snapshot{
		Status:         sessionmap.Status(d.Status),
		StatusMessage:  d.StatusMessage,
		PollIntervalMs: d.PollIntervalMs,
	}
	if !sn.Status.Valid() {
		return sn, fmt.Errorf("face: upstream task status %q", d.Status)
	}
	if sn.PollIntervalMs != nil && *sn.PollIntervalMs < 0 {
		sn.PollIntervalMs = nil
	}
	switch d.Status {
	case modern.StatusCompleted:
		sn.Result = d.Result
	case modern.StatusFailed:
		if d.Error != nil {
			e, err := json.Marshal(d.Error)
			if err != nil {
				return sn, fmt.Errorf("face: encode task error: %w", err)
			}
			sn.Error = e
		}
	}
	return sn, nil
}

// detailedOf is a record as the modern DetailedTask it mirrors, under the
// local id.
func detailedOf(rec sessionmap.Task) modern.DetailedTask {
	d := modern.DetailedTask{Task: modern.Task{
		TaskID:         rec.ID,
		Status:         modern.TaskStatus(rec.Status),
		StatusMessage:  rec.StatusMessage,
		CreatedAt:      modern.FormatTime(rec.CreatedAt),
		LastUpdatedAt:  modern.FormatTime(rec.LastUpdatedAt),
		TTLMs:          rec.TTLMs,
		PollIntervalMs: rec.PollIntervalMs,
	}}
	switch rec.Status {
	case sessionmap.StatusCompleted:
		d.Result = rec.Result
	case sessionmap.StatusFailed:
		if len(rec.Error) > 0 {
			var e rpc.Error
			if json.Unmarshal(rec.Error, &e) == nil {
				d.Error = &e
			}
		}
		if d.Error == nil && len(rec.Result) > 0 {
			// failed with a result cannot come from a modern upstream; keep
			// what we have
			d.Result = rec.Result
		}
	}
	return d
}

// legacyTask is what a legacy client sees of a record (tasks/get,
// tasks/list, tasks/cancel, status notifications): isError ⇒ failed,
// input_required kept, ttl always present (L-21, L-29; isError is completed
// in modern, M-56).
func legacyTask(rec sessionmap.Task) legacy.Task {
	return translate.LegacyTaskFromDetailed(detailedOf(rec))
}

// pin waiters: a tasks/cancel wakes every tasks/result blocked on the task,
// even when the upstream ignores the cancel. Parked waits are woken through
// their task's hub, which registers nothing here (parking.pin).
func (b *Bridge) pinWait(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	b.mu.Lock()
	if b.pinWaiters == nil {
		b.pinWaiters = map[string]map[chan struct{}]struct{}{}
	}
	m := b.pinWaiters[id]
	if m == nil {
		m = map[chan struct{}]struct{}{}
		b.pinWaiters[id] = m
	}
	m[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		if m := b.pinWaiters[id]; m != nil {
			delete(m, ch)
			if len(m) == 0 {
				delete(b.pinWaiters, id)
			}
		}
		b.mu.Unlock()
	}
}

func (b *Bridge) signalPin(id string) {
	b.mu.Lock()
	m := b.pinWaiters[id]
	delete(b.pinWaiters, id)
	b.mu.Unlock()
	for ch := range m {
		close(ch)
	}
	// After the channels: the hub's step reads the pinned record, as a
	// blocking wait's does.
	b.parking.pin(id)
}

// claimSent marks key of task id as answered by this process; false when it
// already was (another waiter answered it: exactly once, M-30).
func (b *Bridge) claimSent(id, key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.sentKeys[id]
	if m == nil {
		m = map[string]bool{}
		b.sentKeys[id] = m
	}
	if m[key] {
		return false
	}
	m[key] = true
	return true
}

func (b *Bridge) unclaimSent(id, key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.sentKeys[id], key)
}

func (b *Bridge) wasSent(id, key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sentKeys[id][key]
}

func (b *Bridge) forgetSent(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.sentKeys, id)
}

// answer sends the client's answer to one input key upstream, exactly once
// per key (M-30; docs/ARCHITECTURE.md, Each input key is asked once and
// answered once): the key is claimed in this process, then
// recorded answered with its payload owed in one durable write
// (OweAnswers), then the outbox delivers it as tasks/update until the
// upstream acknowledges it (answerUpstream), even if the waiter that
// presented it is gone, and after a restart too. A key whose answer is
// stored is never presented to the client again (await checks
// AnsweredKeys). Only when the write fails is the key released, so a later
// wait asks again.
func (b *Bridge) answer(rec sessionmap.Task, key string, resp json.RawMessage, opts modernup.CallOptions) {
	if !b.claimSent(rec.ID, key) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	fresh, err := b.store.OweAnswers(ctx, rec.Scope, rec.ID, map[string]json.RawMessage{key: resp})
	cancel()
	if err != nil {
		b.unclaimSent(rec.ID, key)
		b.log.Warn("cannot record a client's input answer; the client will be asked again", "err", err)
		return
	}
	if len(fresh) == 0 {
		return // answered before (by another bridge), or the task is over
	}
	b.answerUpstream(rec, key, resp, opts, true)
}

// terminalSnapshot is terminalSnapshotOf for this bridge's upstream.
func (b *Bridge) terminalSnapshot(snap watch.Snapshot) (sessionmap.Snapshot, bool) {
	return terminalSnapshotOf(b.target, snap)
}
