package legacyface

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
	"github.com/tasksbridge/tasksbridge/translate/waitrule"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// toolsCall runs a legacy tools/call:
//   - with "task" (a 2025-11-25 session): an upstream task is recorded
//     durably, then answered with the nested CreateTaskResult (L-12,
//     docs/ARCHITECTURE.md, No handle before it is durable); a synchronous upstream answer becomes a synthesized task that
//     is already completed;
//   - without "task": a plain result, or, when the upstream made a task
//     anyway, the final result after polling it here (with progress
//     notifications when the client gave a progressToken).
func (s *session) toolsCall(ctx context.Context, ri *reqInfo) (mcp.Result, error) {
	ri.stream.markReady()
	if err := s.b.limits.acquireTask(s.principalOrSession()); err != nil {
		return nil, err // L-73
	}
	parked := false
	defer func() {
		if !parked { // a parked wait hands the place back when it ends
			s.b.limits.releaseTask(s.principalOrSession())
		}
	}()
	s.deliverOwed(ri)
	opts, meta, err := s.callOptions(ri)
	if err != nil {
		return nil, err
	}
	up, err := translate.RequestToModernPrepared(legacy.MethodToolsCall, ri.raw, meta, "")
	if err != nil {
		return nil, err
	}
	// L-05: a session without legacy tasks ignores the opt-in.
	asTask := up.TaskRequested && s.tasksEnabled()
	if up.RequestedTTL != nil && *up.RequestedTTL <= 0 {
		// A clamped negative or zero ttl would make the task vanish at
		// once; the receiver may override a requested ttl (L-20).
		up.RequestedTTL = nil
	}
	var call struct {
		Name string
		Meta struct{ ProgressToken json.RawMessage }
	}
	call.Name, call.Meta.ProgressToken = callHead(ri.raw)

	relay := s.relay(ctx, ri)
	opts.OnNotify = relay.push
	// M-11: callToolUpstream adds the Mcp-Param-* headers (mcpparam.go) to
	// this call only; opts stays header-free for the task's later requests.
	// RequestToModern stamped this session's _meta into up.Params; the
	// task's later requests (built here, unstamped) use opts as it is.
	stamped := opts
	stamped.Stamped = true
	intentID := ""
	if asTask {
		// Durable before the upstream can create anything (intent.go).
		if intentID, err = s.writeIntent(ctx, ri, call.Name); err != nil {
			relay.stop()
			return nil, err
		}
	}
	kind, raw, err := s.callToolUpstream(ctx, up.Params, stamped)
	relay.stop()
	if err != nil {
		if settledByAnswer(err) {
			s.settleIntent(intentID)
		}
		return nil, s.b.upstreamError(legacy.MethodToolsCall, asTask, err)
	}
	if kind != translate.CallTask {
		defer s.settleIntent(intentID) // nothing left running upstream
	}

	switch kind {
	case translate.CallComplete:
		if !asTask {
			out, err := legacyResult(raw)
			if err != nil {
				return nil, err
			}
			return newRaw(out)
		}
		return s.synthesize(ctx, call.Name, raw, up.RequestedTTL)
	case translate.CallTask:
		ct, err := modern.DecodeCreateTaskResult(raw)
		if err != nil {
			return nil, rpc.Errorf(rpc.CodeInternalError, "upstream %s sent an invalid CreateTaskResult: %s", s.b.target, rpc.As(err).Message)
		}
		rec := s.newRecord(ct.Task, call.Name, up.RequestedTTL)
		if intentID != "" {
			rec.ID = intentID // the record settles the intent (intent.go)
		}
		if err := s.b.store.CreateTask(ctx, rec); err != nil {
			// Without a durable record the id must not reach the client
			// (L-12), so nobody could follow the upstream task:
			// cancel it rather than leave it running (intent.go).
			s.cancelUndelivered(intentID, ct.Task, call.Name, opts)
			return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: cannot record the task: %v", err)
		}
		s.settleIntent(intentID)
		s.bind(rec, opts)
		if !asTask {
			ri.out.bindTask(rec.ID) // a resumed stream waits on it too
		}
		s.b.log.Debug("face: task created", "task", rec.ID, "tool", call.Name)
		s.audit(audit.ActionCreate, rec.ID, call.Name, "created", 0)
		if !asTask {
			// What follows the wait below, a parked wait does when it ends.
			tailOpts := opts
			ri.parkCtl().setTail(parkTail{audit: true, releaseTask: true, abandon: true, opts: &tailOpts})
			res, err := s.await(ctx, ri, rec, awaitPlain, call.Meta.ProgressToken)
			if errors.Is(err, errParked) {
				parked = true
				return nil, err
			}
			s.auditErr(audit.ActionResult, rec.ID, call.Name, err)
			if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) &&
				(errors.Is(context.Cause(ctx), errCallCancelled) || !ri.out.resumable()) {
				// notifications/cancelled for the call, or a client gone
				// from a stream it cannot resume: the client never saw the
				// task, so nobody else can want it. A client that lost a
				// resumable stream may come back for it (resume.go).
				s.b.abandon(rec, opts)
			}
			return res, err
		}
		if ctx.Err() != nil && (errors.Is(context.Cause(ctx), errCallCancelled) || !ri.out.resumable()) {
			// The client went away (or cancelled the call) before the
			// CreateTaskResult could reach it, on a stream it cannot
			// resume: nobody will ever know the task's id, so it is
			// cancelled upstream instead of left running, as for a
			// plain call above.
			s.b.abandon(rec, opts)
			return nil, ctx.Err()
		}
		res, err := translate.LegacyCreateTaskResult(detailedOf(rec).Task, translate.CreateOptions{})
		if err != nil {
			return nil, err
		}
		s.follow(rec)
		return newRaw(res)
	}
	return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: unexpected upstream result kind %v", kind)
}

// newRecord is the durable record of an upstream task under a fresh local
// id (128+ bits, L-70): the upstream id never reaches the client.
func (s *session) newRecord(t modern.Task, tool string, requestedTTL *int64) sessionmap.Task {
	now := time.Now().UTC()
	rec := sessionmap.Task{
		ID:             sessionmap.NewTaskID(),
		Scope:          s.scope(),
		Direction:      sessionmap.LegacyToModern,
		Origin:         sessionmap.OriginUpstreamTask,
		Upstream:       s.b.target,
		UpstreamTaskID: t.TaskID,
		Method:         legacy.MethodToolsCall,
		ToolName:       tool,
		RequestedTTLMs: requestedTTL,
		TTLMs:          t.TTLMs,
		Status:         sessionmap.StatusWorking,
		StatusMessage:  t.StatusMessage,
		PollIntervalMs: t.PollIntervalMs,
		CreatedAt:      now,
		LastUpdatedAt:  now,
	}
	// Timestamps are the bridge's own: the store judges expiry (createdAt +
	// ttl) and the order of observations with its clock, and the upstream's
	// clock may be skewed.
	if st := sessionmap.Status(t.Status); st.Valid() && !st.Terminal() {
		rec.Status = st
	}
	// The bridge keeps the record no longer than the client asked (L-20).
	if requestedTTL != nil && (rec.TTLMs == nil || *requestedTTL < *rec.TTLMs) {
		v := *requestedTTL
		rec.TTLMs = &v
	}
	if rec.PollIntervalMs != nil && *rec.PollIntervalMs <= 0 {
		rec.PollIntervalMs = nil
	}
	return rec
}

// synthesize answers a task-augmented call that the upstream answered
// synchronously with a task that is already completed and holds the result
// (L-12: an accepted task-augmented request MUST get a CreateTaskResult).
func (s *session) synthesize(ctx context.Context, tool string, result json.RawMessage, requestedTTL *int64) (mcp.Result, error) {
	id := sessionmap.NewTaskID()
	poll := s.b.cfg.Watch.DefaultPollInterval.Milliseconds()
	d, err := translate.SynthesizeTask(id, dropMetaKey(result, modern.MetaKeyServerInfo), translate.SystemClock, requestedTTL, s.b.cfg.MaxTaskTTL.Milliseconds(), &poll)
	if err != nil {
		return nil, err
	}
	rec := sessionmap.Task{
		ID:             id,
		Scope:          s.scope(),
		Direction:      sessionmap.LegacyToModern,
		Origin:         sessionmap.OriginSynthesized,
		Upstream:       s.b.target,
		Method:         legacy.MethodToolsCall,
		ToolName:       tool,
		RequestedTTLMs: requestedTTL,
		TTLMs:          d.TTLMs,
		Status:         sessionmap.Status(d.Status),
		StatusMessage:  d.StatusMessage,
		PollIntervalMs: d.PollIntervalMs,
		Result:         d.Result,
	}
	if err := s.b.store.CreateTask(ctx, rec); err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: cannot record the task: %v", err)
	}
	s.audit(audit.ActionCreate, rec.ID, tool, "created", 0)
	res, err := translate.LegacyCreateTaskResult(d.Task, translate.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return newRaw(res)
}

// lookup reads a task through the scope check: unknown, expired, foreign
// and other-direction ids all get the same -32602 (docs/ARCHITECTURE.md, A
// foreign id answers like an unknown one; L-38,
// L-45, L-56, L-69).
func (s *session) lookup(ctx context.Context, id string) (sessionmap.Task, error) {
	// Bounded: a store that froze answers the retryable storeUnavailable
	// instead of holding the client in silence.
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	rec, err := s.b.store.GetTask(sctx, s.scope(), id)
	cancel()
	if err != nil && ctx.Err() != nil {
		return rec, ctx.Err()
	}
	if err == nil && rec.Direction != sessionmap.LegacyToModern {
		err = sessionmap.ErrNotFound
	}
	switch {
	case err == nil:
		return rec, nil
	case errors.Is(err, sessionmap.ErrNotFound):
		return rec, legacy.TaskNotFoundError(id)
	default:
		return rec, storeUnavailable(err)
	}
}

// live reports whether rec still follows an upstream task (the wait rule's
// judgement, waitrule.Record.Live).
func live(rec sessionmap.Task) bool { return recordView(rec, nil).Live() }

// refresh brings rec up to date from the watcher's cache, asking upstream
// only when the cached state is older than the task's poll interval (M-24).
// With no state at all and the upstream unreachable it fails with
// the -32603 naming the upstream; a stale state is served otherwise, and
// an upstream that does not answer within freshWait (stalled) gets the
// latest state known (watchGet) or recorded, never a held client.
func (s *session) refresh(ctx context.Context, ri *reqInfo, rec sessionmap.Task) (sessionmap.Task, error) {
	if !live(rec) {
		return rec, nil
	}
	opts, _, err := s.callOptions(ri)
	if err != nil {
		return rec, err
	}
	key := s.bind(rec, opts)
	snap, err := s.b.watchGet(ctx, key)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return rec, err
		}
		if errors.Is(err, errNoFreshState) {
			// A stalled upstream: the record holds the latest state
			// recorded (M-24 lets the answer be as old as a poll
			// interval; a stalled upstream has nothing newer to say).
			return rec, nil
		}
		// The watcher may have finished the task between our read and this
		// one: it records the terminal state, then drops the binding, so a
		// new watcher started by this Get finds none. The record is the answer.
		if cur, gerr := s.b.store.GetTask(ctx, rec.Scope, rec.ID); gerr == nil && cur.Status.Terminal() {
			return cur, nil
		}
		if s.b.authExpired(watch.Snapshot{Err: err}, rec.Scope.Principal) {
			return rec, expiredFor(ri, err) // the task goes on (creds.go)
		}
		return rec, s.b.upstreamError(legacy.MethodTasksGet, true, err)
	}
	cur, err := s.b.readRecord(ctx, rec)
	switch {
	case errors.Is(err, sessionmap.ErrNotFound):
		return rec, legacy.TaskNotFoundError(rec.ID) // expired meanwhile (L-65)
	case err != nil:
		return rec, storeUnavailable(err) // the task may be alive: never "not found"
	}
	cur = s.b.withTerminal(cur, snap)
	if snap.Task != nil && live(cur) {
		if ended, ok := s.endUndeclared(ctx, cur, *snap.Task, opts); ok {
			return ended, nil
		}
	}
	return cur, nil
}

// withTerminal is rec as a terminal snapshot the store may not have
// recorded yet makes it (the watchers hand terminal snapshots to waiters
// before the durable write, see observe): a waiter may already have
// answered from it, so reads agree with that answer. A pinned cancel still
// wins (L-58), as it does in the store. An upstream that no longer knows
// the task (M-27) is such a terminal snapshot too.
func (b *Bridge) withTerminal(rec sessionmap.Task, snap watch.Snapshot) sessionmap.Task {
	if !live(rec) || rec.CancelPinned {
		return rec
	}
	sn, ok := b.terminalSnapshot(snap)
	if !ok {
		return rec
	}
	return mergeTerminal(rec, sn)
}

// tasksGet answers tasks/get with the translated status, a flat Task (L-39).
func (s *session) tasksGet(ctx context.Context, ri *reqInfo, raw json.RawMessage) (mcp.Result, error) {
	s.deliverOwed(ri)
	p, err := legacy.DecodeGetTaskParams(raw)
	if err != nil {
		return nil, err
	}
	rec, err := s.lookup(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if rec, err = s.refresh(ctx, ri, rec); err != nil {
		return nil, err
	}
	return newRaw(legacy.GetTaskResult{Task: legacyTask(rec)})
}

// tasksList answers tasks/list from sessionmap, in the caller's scope, with
// opaque cursors and fresh statuses (L-49..L-54).
func (s *session) tasksList(ctx context.Context, ri *reqInfo, raw json.RawMessage) (mcp.Result, error) {
	s.deliverOwed(ri)
	p, err := legacy.DecodeListTasksParams(raw)
	if err != nil {
		return nil, err
	}
	// Whole records in one store round trip per page (not one read per
	// listed task): the legacy view needs them, as an isError result makes
	// a completed task failed.
	sctx, cancel := context.WithTimeout(ctx, storeTimeout) // a frozen store fails, retryable
	page, err := s.b.store.ListTasksFull(sctx, s.scope(), s.b.cfg.ListPageSize, p.Cursor)
	cancel()
	if err != nil {
		if errors.Is(err, sessionmap.ErrInvalidCursor) {
			return nil, legacy.InvalidCursorError(p.Cursor)
		}
		return nil, storeUnavailable(err)
	}
	recs := make([]sessionmap.Task, 0, len(page.Tasks))
	for _, full := range page.Tasks {
		if full.Direction != sessionmap.LegacyToModern {
			continue // not this face's
		}
		recs = append(recs, full)
	}
	// Fresh statuses, from the watchers' caches (bounded work per page).
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range recs {
		if !live(recs[i]) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if cur, err := s.refresh(cctx, ri, recs[i]); err == nil {
				recs[i] = cur
			}
		}()
	}
	wg.Wait()
	out := legacy.ListTasksResult{Tasks: make([]legacy.Task, 0, len(recs)), NextCursor: page.NextCursor}
	for _, r := range recs {
		out.Tasks = append(out.Tasks, legacyTask(r))
	}
	return newRaw(out)
}

// tasksCancel pins the task cancelled before replying and asks the upstream
// to stop (L-55..L-59).
func (s *session) tasksCancel(ctx context.Context, ri *reqInfo, raw json.RawMessage) (res mcp.Result, err error) {
	s.deliverOwed(ri)
	p, err := legacy.DecodeCancelTaskParams(raw)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.auditErr(audit.ActionCancel, p.TaskID, "", err)
		} else {
			s.audit(audit.ActionCancel, p.TaskID, "", "cancelled", 0)
		}
	}()
	rec, err := s.lookup(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if cur, err := s.refresh(ctx, ri, rec); err == nil {
		rec = cur // a task that already ended upstream is not cancelled
	}
	dec := translate.DecideLegacyCancel(legacyTask(rec), translate.SystemClock)
	if dec.Action == translate.CancelReject {
		return nil, dec.Error
	}
	sctx, cancel := context.WithTimeout(ctx, storeTimeout) // a frozen store fails, retryable
	pinned, err := s.b.store.PinCancel(sctx, rec.Scope, rec.ID)
	cancel()
	switch {
	case errors.Is(err, sessionmap.ErrTerminal):
		return nil, legacy.CancelTerminalError(rec.ID, legacyTask(pinned).Status)
	case errors.Is(err, sessionmap.ErrNotFound):
		return nil, legacy.TaskNotFoundError(rec.ID)
	case err != nil:
		return nil, storeUnavailable(err)
	}
	s.b.signalPin(rec.ID)
	if dec.ForwardUpstream && pinned.UpstreamCancelPending {
		// The pin is the truth for the legacy client (L-58, L-59); the
		// upstream is asked to stop (L-57) by the outbox, which retries
		// until it takes the cancel, in this process or the next.
		if opts, _, err := s.callOptions(ri); err == nil {
			s.b.cancelUpstream(pinned, opts)
		}
	}
	return newRaw(legacy.CancelTaskResult{Task: legacyTask(pinned)})
}

// tasksResult blocks until the task is terminal and answers with its result
// or error (L-41..L-48).
func (s *session) tasksResult(ctx context.Context, ri *reqInfo, raw json.RawMessage) (mcp.Result, error) {
	s.deliverOwed(ri)
	p, err := legacy.DecodeGetTaskPayloadParams(raw)
	if err != nil {
		return nil, err
	}
	rec, err := s.lookup(ctx, p.TaskID)
	if err != nil {
		s.auditErr(audit.ActionResult, p.TaskID, "", err)
		return nil, err
	}
	ri.stream.markReady()
	ri.parkCtl().setTail(parkTail{audit: true})
	res, err := s.await(ctx, ri, rec, awaitResult, nil)
	if errors.Is(err, errParked) {
		return nil, err // the parked wait audits its end (parked.go)
	}
	s.auditErr(audit.ActionResult, rec.ID, rec.ToolName, err)
	return res, err
}

// abandon cancels an internally polled task nobody waits for any more: the
// record is pinned cancelled and the upstream asked to stop, in the
// background.
func (b *Bridge) abandon(rec sessionmap.Task, opts modernup.CallOptions) {
	b.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pinned, err := b.store.PinCancel(ctx, rec.Scope, rec.ID)
		if err != nil {
			return // already terminal
		}
		b.signalPin(rec.ID)
		b.cancelUpstream(pinned, opts)
	})
}

// payload is the tasks/result answer: the underlying result with
// related-task _meta (L-34), without the upstream's serverInfo.
func payload(r legacy.GetTaskPayloadResult) (mcp.Result, error) {
	b, err := r.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return newRaw(dropMetaKey(b, modern.MetaKeyServerInfo))
}

// await blocks on the task's shared watcher until it is terminal (L-42),
// presenting each new input key to the client on this request's stream
// (L-46). The wait ends early, without touching the task, when the client
// cancels the request or goes away (L-48, L-86; docs/ARCHITECTURE.md, A
// client giving up ends only its own wait), or when the
// bridge shuts down.
func (s *session) await(ctx context.Context, ri *reqInfo, rec sessionmap.Task, mode awaitMode, progressToken json.RawMessage) (mcp.Result, error) {
	if !live(rec) {
		return answerOf(rec, mode)
	}
	// A parked wait resumed on a goroutine (parked.go) already holds its
	// place among the principal's waiters.
	pc := ri.parkCtl()
	if !pc.takeWaiter() {
		if err := s.b.limits.acquireWaiter(s.principalOrSession()); err != nil {
			return nil, err
		}
	}
	parked := false
	defer func() {
		if !parked { // a parked wait hands the place back when it ends
			s.b.limits.releaseWaiter(s.principalOrSession())
		}
	}()
	if ri.out != nil {
		ri.out.prime()
	}
	// A wait costs no goroutine of its own: the request's end, the
	// session's end and the bridge's drain each cancel it through
	// context.AfterFunc, which registers a callback instead of parking a
	// goroutine per waiter.
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel(nil)
		wg.Wait()
	}()
	for _, c := range []struct {
		ctx   context.Context
		cause error
	}{{ri.over, context.Canceled}, {s.b.drain, errDrained}, {s.lifeCtx(), context.Canceled}} {
		if c.ctx == nil {
			continue
		}
		cause := c.cause
		defer context.AfterFunc(c.ctx, func() { cancel(cause) })()
	}
	opts, _, err := s.callOptions(ri)
	if err != nil {
		return nil, err
	}
	key := s.bind(rec, opts)
	pinned, unpin := s.b.pinWait(rec.ID)
	defer unpin()
	sub, err := s.b.attach(key)
	if err != nil {
		if errors.Is(err, watch.ErrClosed) {
			return nil, errShuttingDown()
		}
		// Finished meanwhile (see refresh): the terminal record answers.
		if cur, gerr := s.b.store.GetTask(ctx, rec.Scope, rec.ID); gerr == nil && !live(cur) {
			return answerOf(cur, mode)
		}
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: watch task: %v", err)
	}
	defer sub.Close()
	// decide reads the record and applies the wait rule (waitrule.go) to
	// snap. A read that fails because the wait itself is ending keeps
	// waiting: the ctx.Done case below says why it ended.
	shown := s.shown(rec.ID)
	decide := func(snap watch.Snapshot) waitStep {
		cur, err := s.b.readRecord(ctx, rec)
		if err != nil && ctx.Err() != nil {
			return waitStep{}
		}
		return decideWait(waitInput{rec: cur, recErr: err, snap: snap, target: s.b.target, shown: shown})
	}
	// finish answers a step that ends the wait.
	finish := func(st waitStep) (mcp.Result, error) {
		if st.Kind == waitrule.Fail {
			st.rec = rec // a lost record is named by the id this wait knows
		} else {
			s.forgetPresented(rec.ID)
		}
		return st.answer(mode)
	}
	// A cancel or completion that landed before the subscription started.
	if st := decide(watch.Snapshot{}); st.ends() {
		return finish(st)
	}
	// The record's own end (createdAt + ttl, L-64): the wait ends then even
	// when no snapshot comes (notifications flowing, the upstream silent).
	expiry := newExpiryTimer(rec)
	defer expiry.stop()

	prog := progressSender{s: s, ri: ri, token: progressToken}
	asking := map[string]context.CancelFunc{} // the keys this wait presents
	for {
		// Once the wait has nothing to do but wait (no snapshot or cancel
		// pending, no question of its own out), a request over HTTP/1
		// parks: it hands its connection to the task's hub and frees this
		// goroutine (parked.go). A wait with a progress token or questions
		// out keeps its goroutine: it has work of its own between snapshots.
		if pc != nil && len(progressToken) == 0 && len(asking) == 0 &&
			len(sub.C) == 0 && !closed(pinned) && ctx.Err() == nil {
			wg.Wait() // questions already settled: their senders are ending
			if s.park(pc, rec, mode) {
				parked = true
				return nil, errParked
			}
			pc = nil // the connection cannot be taken over: block here
		}
		select {
		case snap, ok := <-sub.C:
			if !ok {
				if ctx.Err() == nil {
					return nil, errShuttingDown()
				}
				continue // the next case reports why
			}
			if s.b.authExpired(snap, rec.Scope.Principal) {
				return nil, expiredFor(ri, snap.Err) // the task goes on (creds.go)
			}
			if snap.Task == nil && snap.Gone == nil {
				continue // the upstream is unreachable; the watcher retries with backoff
			}
			st := decide(snap)
			if st.ends() {
				return finish(st)
			}
			cur := st.rec
			// A question whose answer the store holds (the client's
			// answer reached another process, questions.go) is no
			// longer waited for here.
			for k, stop := range asking {
				if answered(cur, k) {
					stop()
					delete(asking, k)
				}
			}
			if snap.Task == nil {
				continue
			}
			prog.update(ctx, cur)
			d := *snap.Task
			d.TaskID = rec.ID
			if ended, ok := s.endUndeclared(ctx, cur, d, opts); ok {
				s.forgetPresented(rec.ID)
				return answerOf(ended, mode)
			}
			for _, k := range st.Present {
				// A key answered in this process, or whose answer the
				// store holds (perhaps still owed upstream, from before a
				// restart, or recorded by another replica), is never asked
				// again (M-30).
				if !s.markPresented(rec.ID, k) {
					continue
				}
				req := d.InputRequests[k]
				kctx, kcancel := context.WithCancel(ctx)
				asking[k] = kcancel
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer kcancel()
					s.present(kctx, cur, k, req, opts)
				}()
			}
		case <-pinned:
			pinned = nil
			if st := decide(sub.Latest()); st.ends() {
				return finish(st)
			}
		case <-expiry.c():
			expiry.rearm()
			if st := decide(sub.Latest()); st.ends() {
				return finish(st)
			}
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errDrained) {
				return nil, errShuttingDown()
			}
			return nil, ctx.Err()
		case <-prog.tick():
			prog.beat(ctx)
		}
	}
}

// present shows one upstream input request to the client as a legacy
// server→client request with related-task _meta (L-33) and sends the answer
// upstream (exactly once per key, M-30).
func (s *session) present(ctx context.Context, rec sessionmap.Task, key string, req modern.InputRequest, opts modernup.CallOptions) {
	side, err := translate.InputRequestToLegacy(rec.ID, key, req, s.clientCaps(), presentIDs(rec.ID, key))
	if err != nil {
		s.b.log.Warn("face: cannot relay an input request to the client", "err", rpc.As(err).Message)
		return
	}
	if ri := reqInfoFrom(ctx); ri != nil && ri.out != nil {
		// Recorded before it goes out, so whichever process the client's
		// answer reaches can take it (questions.go).
		id, err := sideID(side)
		again := false
		if err == nil {
			again, err = s.recordQuestion(ctx, rec, key, id, req)
		}
		if err != nil {
			s.b.log.Warn("face: cannot record an input request; only this process can take its answer", "err", err)
		}
		if again && s.answeredMeanwhile(ctx, rec, key) {
			if ctx.Err() != nil {
				s.unmarkPresented(rec.ID, key)
			}
			return // shown before and answered since (M-30)
		}
	}
	resp, err := s.ask(ctx, side)
	if err != nil {
		s.unmarkPresented(rec.ID, key) // nobody answered: a later wait asks again
		return
	}
	s.takeAnswer(rec, key, req, resp, opts)
}

// answered reports whether the store holds an answer to key of rec.
func answered(rec sessionmap.Task, key string) bool {
	_, found := slices.BinarySearch(rec.AnsweredKeys, key)
	return found
}

func (s *session) markPresented(id, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.presented == nil {
		s.presented = map[string]map[string]bool{}
	}
	m := s.presented[id]
	if m == nil {
		m = map[string]bool{}
		s.presented[id] = m
	}
	if m[key] {
		return false
	}
	m[key] = true
	return true
}

func (s *session) forgetPresented(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.presented, id)
}

func (s *session) unmarkPresented(id, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.presented[id], key)
}

// progressSender turns status changes of an internally polled task into
// notifications/progress for a client that gave a progressToken (L-62), and
// repeats the current status at the keep-alive cadence while the task runs,
// so the stream never goes silent (L-63).
type progressSender struct {
	s     *session
	ri    *reqInfo
	token json.RawMessage
	n     float64
	last  string
	msg   string
}

// tick fires at the process's shared keep-alive beat (nil: never).
func (p *progressSender) tick() <-chan struct{} {
	if len(p.token) == 0 {
		return nil
	}
	return p.s.b.beat.next()
}

func (p *progressSender) update(ctx context.Context, rec sessionmap.Task) {
	if len(p.token) == 0 {
		return
	}
	sig := string(rec.Status) + "\x00" + rec.StatusMessage
	if sig == p.last {
		return
	}
	p.last = sig
	p.msg = rec.StatusMessage
	if p.msg == "" {
		p.msg = "task " + string(rec.Status)
	}
	p.send(ctx)
}

// beat repeats the latest status (or says the task is working).
func (p *progressSender) beat(ctx context.Context) {
	if p.msg == "" {
		p.msg = "task " + string(sessionmap.StatusWorking)
	}
	p.send(ctx)
}

func (p *progressSender) send(ctx context.Context) {
	p.n++
	params, err := json.Marshal(struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Progress      float64         `json:"progress"`
		Message       string          `json:"message,omitempty"`
	}{p.token, p.n, p.msg})
	if err != nil {
		return
	}
	p.s.deliver(ctx, p.ri, modern.NotificationProgress, params)
}

// follow sends notifications/tasks/status for a task this session created
// whenever its legacy view changes, until it is terminal or the session
// ends (L-61; optional, and never relied upon by clients).
func (s *session) follow(rec sessionmap.Task) {
	if !s.b.cfg.StatusNotifications || !live(rec) {
		return
	}
	s.mu.Lock()
	if s.watched[rec.ID] || s.closed {
		s.mu.Unlock()
		return
	}
	if s.watched == nil {
		s.watched = map[string]bool{}
	}
	s.watched[rec.ID] = true
	s.mu.Unlock()
	key := s.b.keyOf(rec)
	s.b.goBackground(func() {
		defer func() {
			s.mu.Lock()
			delete(s.watched, rec.ID)
			s.mu.Unlock()
		}()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		defer context.AfterFunc(s.b.drain, cancel)()
		go func() {
			select {
			case <-s.done():
				cancel()
			case <-ctx.Done():
			}
		}()
		sub, err := s.b.attach(key)
		if err != nil {
			return
		}
		defer sub.Close()
		pinned, unpin := s.b.pinWait(rec.ID)
		defer unpin()
		last := legacyTask(rec)
		// check notifies a change of the task's legacy view. A terminal
		// snapshot reaches followers before the watcher's durable write
		// (observe), and the watcher ends with it, so the record alone may
		// still say working: the snapshot decides, as for reads
		// (withTerminal).
		check := func(snap watch.Snapshot) bool {
			cur, err := s.b.store.GetTask(ctx, rec.Scope, rec.ID)
			if err != nil {
				return false
			}
			cur = s.b.withTerminal(cur, snap)
			t := legacyTask(cur)
			if t.Status != last.Status || t.StatusMessage != last.StatusMessage {
				last = t
				s.sendNotification(legacy.MethodTaskStatus, legacy.TaskStatusNotificationParams{Task: t})
			}
			return live(cur)
		}
		for {
			select {
			case snap, ok := <-sub.C:
				if !ok {
					return
				}
				if (snap.Task != nil || snap.Gone != nil) && !check(snap) {
					return
				}
			case <-pinned:
				check(watch.Snapshot{})
				return
			case <-ctx.Done():
				return
			}
		}
	})
}
