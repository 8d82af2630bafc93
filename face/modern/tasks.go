package modernface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// taskRT is what the face holds in memory for a live task: its upstream
// session, the blocking tasks/result it keeps open upstream, and the input
// requests received on it.
type taskRT struct {
	f             *Face
	id            string // local id, what the client sees
	upID          string // the upstream's id
	scope         sessionmap.Scope
	principal     string
	authorization string
	key           watch.Key
	base          modern.Task // from the record: createdAt, ttl, poll interval
	// life ends when the task does for the bridge (terminal, failed by the
	// bridge) or the face closes, and expiry is when its ttl runs out (zero:
	// the upstream keeps it without limit): the blocking tasks/result held
	// upstream for the task ends with the first of them (ensureStream).
	life   context.Context
	end    context.CancelFunc
	expiry time.Time

	mu        sync.Mutex
	sess      *legacyup.Session
	status    legacy.TaskStatus // the upstream's, as last read
	pending   map[string]translate.InputEntry
	order     []string
	answered  map[string]bool
	logNext   int // the next input-log number not yet read (inputs.go)
	streaming bool
	outcome   *translate.LegacyOutcome
	streamErr error
	failure   *modern.DetailedTask // a failure the bridge decided (the upstream became unreachable for good)
	changed   chan struct{}        // closed and replaced on every change
}

func (rt *taskRT) notifyLocked() {
	close(rt.changed)
	rt.changed = make(chan struct{})
}

// readTimeout bounds how long tasks/get waits for a fresh upstream read.
const readTimeout = 5 * time.Second

// now is the face's clock.
func (f *Face) now() time.Time { return time.Now() }

// runtime returns the in-memory state of rec, creating it (after a restart:
// with the recorded upstream session, resumed by id on HTTP).
func (f *Face) runtime(rec sessionmap.Task, principal, authorization string, sess *legacyup.Session) *taskRT {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rt := f.tasks[rec.ID]; rt != nil {
		return rt
	}
	if sess == nil {
		sess = f.pool.Lookup(rec.UpstreamSessionID)
	}
	if sess == nil {
		sess = f.pool.Resume(principal, rec.UpstreamSessionID, authorization)
	}
	life, end := context.WithCancel(f.ctx)
	rt := &taskRT{
		f: f, id: rec.ID, upID: rec.UpstreamTaskID, scope: rec.Scope, principal: principal, authorization: authorization,
		key:  watch.Key{Target: f.pool.Target(), TaskID: rec.ID},
		base: recordTask(rec).Task, sess: sess, life: life, end: end, expiry: taskExpiry(rec),
		pending: map[string]translate.InputEntry{}, answered: map[string]bool{}, changed: make(chan struct{}),
	}
	for _, k := range rec.AnsweredKeys {
		rt.answered[k] = true
	}
	f.tasks[rec.ID] = rt
	return rt
}

// taskExpiry is when a task's ttl, as the upstream gave it, runs out: no
// wait the bridge holds for the task outlives that. Zero when the upstream
// keeps the task without limit (ttl null, L-20).
func taskExpiry(rec sessionmap.Task) time.Time {
	if rec.TTLMs == nil || *rec.TTLMs <= 0 {
		return time.Time{}
	}
	created := rec.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	return created.Add(time.Duration(*rec.TTLMs) * time.Millisecond)
}

func (f *Face) taskRT(id string) *taskRT {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tasks[id]
}

// recordTask renders a stored task as a DetailedTask (terminal payloads come
// from the store's cache).
func recordTask(rec sessionmap.Task) modern.DetailedTask {
	d := modern.DetailedTask{Task: modern.Task{
		TaskID: rec.ID, Status: modern.TaskStatus(rec.Status), StatusMessage: rec.StatusMessage,
		CreatedAt: modern.FormatTime(rec.CreatedAt), LastUpdatedAt: modern.FormatTime(rec.LastUpdatedAt),
		TTLMs: rec.TTLMs, PollIntervalMs: rec.PollIntervalMs,
	}}
	switch d.Status {
	case modern.StatusCompleted:
		d.Result = rec.Result
	case modern.StatusFailed:
		var e rpc.Error
		if json.Unmarshal(rec.Error, &e) == nil && e.Message != "" {
			d.Error = &e
		} else {
			d.Error = rpc.Errorf(rpc.CodeInternalError, "the task failed")
		}
	}
	return d
}

// outstanding returns the input requests not yet answered (M-55: all of them).
func (rt *taskRT) outstanding() modern.InputRequests {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.outstandingLocked()
}

func (rt *taskRT) outstandingLocked() modern.InputRequests {
	if len(rt.pending) == 0 {
		return nil
	}
	out := modern.InputRequests{}
	for k, e := range rt.pending {
		out[k] = e.Request
	}
	return out
}

// view applies what only the bridge knows to an upstream snapshot: a
// non-terminal task with unanswered input requests is input_required with all
// of them (M-55); one without is working, whatever the upstream's status (a
// legacy upstream delivers its requests only on tasks/result, and an answer
// the bridge relayed shows upstream a little later; M-58 allows that lag, the
// client must not see answered keys again).
func (rt *taskRT) view(d modern.DetailedTask) modern.DetailedTask {
	if d.Status.IsTerminal() {
		return d
	}
	d.Result, d.Error = nil, nil
	if pending := rt.outstanding(); len(pending) > 0 {
		d.Status, d.InputRequests = modern.StatusInputRequired, pending
	} else {
		d.Status, d.InputRequests = modern.StatusWorking, nil
	}
	return d
}

// onSideRequest receives a server→client request the upstream sent for the
// task on the bridge's blocking tasks/result, as an inputRequests entry with
// a key unique for the task's lifetime (M-57).
func (rt *taskRT) onSideRequest(sr *legacyup.SideRequest) {
	entry, err := translate.InputRequestFromLegacy(sr.Raw, rt.f.opts.IDs)
	if err != nil {
		rt.mu.Lock()
		sess := rt.sess
		rt.mu.Unlock()
		if sess != nil {
			_ = sess.Respond(rt.f.ctx, sr.ID, nil, rpc.As(err))
		}
		return
	}
	// Logged for every process first: the client may ask any of them next.
	ctx, cancel := context.WithTimeout(rt.f.ctx, readTimeout)
	err = rt.recordInput(ctx, entry)
	cancel()
	if err != nil {
		rt.f.log.Warn("modern face: cannot record a task's input request in the store; only this bridge process can present it",
			"err", err)
	}
	rt.mu.Lock()
	if rt.addPendingLocked(entry) {
		rt.notifyLocked()
	}
	rt.mu.Unlock()
	rt.f.watch.Refresh(rt.key) // listeners see the new request (M-63)
}

// ensureStream keeps the upstream's blocking tasks/result open for the task:
// the side-channel requests arrive on it, and it answers with the payload
// once the task is terminal (fetched once, then cached in sessionmap).
func (rt *taskRT) ensureStream(sess *legacyup.Session) {
	rt.mu.Lock()
	if rt.streaming || rt.outcome != nil {
		rt.mu.Unlock()
		return
	}
	if err := rt.life.Err(); err != nil {
		// The task is over for the bridge: no new wait upstream.
		rt.streamErr = fmt.Errorf("modern face: the task's wait ended: %w", err)
		rt.mu.Unlock()
		return
	}
	rt.streaming = true
	rt.mu.Unlock()
	f := rt.f
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		var resp json.RawMessage
		var err error
		if rt.expiry.IsZero() || time.Now().Before(rt.expiry) {
			// A wait held on the task's behalf, not bounded by the upstream
			// timeout (upstream.CallOptions.Wait) but by the task's life:
			// it ends when the task does, by any route, or its ttl runs
			// out — cancelled upstream then (L-86: only the wait ends).
			ctx, cancel := rt.life, context.CancelFunc(func() {})
			if !rt.expiry.IsZero() {
				ctx, cancel = context.WithDeadline(rt.life, rt.expiry)
			}
			resp, err = sess.TaskResult(ctx, rt.upID, rt.onSideRequest)
			cancel()
		} else {
			// Past its ttl the upstream may still know the task (a
			// terminal one answers at once): an ordinary request, bounded
			// by the upstream timeout, not a wait.
			resp, err = sess.FetchTaskResult(rt.life, rt.upID, rt.onSideRequest)
		}
		rt.mu.Lock()
		rt.streaming = false
		if err == nil {
			o, perr := translate.LegacyOutcomeFromResponse(resp)
			if perr == nil {
				rt.outcome = &o
			} else {
				rt.streamErr = perr
			}
		} else {
			rt.streamErr = err
		}
		rt.notifyLocked()
		rt.mu.Unlock()
		f.watch.Refresh(rt.key)
	}()
}

// waitOutcome waits for the payload of a terminal task.
func (rt *taskRT) waitOutcome(ctx context.Context, sess *legacyup.Session) (*translate.LegacyOutcome, error) {
	for {
		rt.ensureStream(sess)
		rt.mu.Lock()
		if rt.outcome != nil {
			o := rt.outcome
			rt.mu.Unlock()
			return o, nil
		}
		if !rt.streaming && rt.streamErr != nil {
			err := rt.streamErr
			rt.streamErr = nil // the next poll tries again
			rt.mu.Unlock()
			return nil, err
		}
		ch := rt.changed
		rt.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// fail makes the task failed for a reason only the bridge knows (M-56: a
// JSON-RPC error, -32603, that says why). It sticks.
func (rt *taskRT) fail(reason string) *modern.DetailedTask {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.failure == nil {
		d := modern.DetailedTask{Task: rt.base}
		d.Status = modern.StatusFailed
		d.StatusMessage = reason
		d.LastUpdatedAt = modern.FormatTime(rt.f.now())
		d.Error = rpc.Errorf(rpc.CodeInternalError, "%s", reason)
		rt.failure = &d
		rt.pending = map[string]translate.InputEntry{}
		rt.notifyLocked()
		rt.end() // the task is over for the bridge: its wait upstream ends
	}
	return rt.failure
}

// rtSource adapts a task to runtime/watch: every poll is a legacy tasks/get
// (plus, once terminal, the cached tasks/result payload).
type rtSource struct{ rt *taskRT }

func (s rtSource) GetTask(ctx context.Context, _ string) (*modern.DetailedTask, error) {
	return s.rt.poll(ctx)
}

func (s rtSource) UpdateTask(context.Context, string, modern.InputResponses) error {
	return errors.New("modern face: answers go to the legacy upstream by JSON-RPC id, not tasks/update")
}

func (f *Face) watchSource(key watch.Key) (watch.Source, error) {
	rt := f.taskRT(key.TaskID)
	if rt == nil {
		return nil, fmt.Errorf("modern face: task not loaded")
	}
	return rtSource{rt}, nil
}

// poll reads the task from the upstream once.
func (rt *taskRT) poll(ctx context.Context) (*modern.DetailedTask, error) {
	rt.mu.Lock()
	if rt.failure != nil {
		d := *rt.failure
		rt.mu.Unlock()
		return &d, nil
	}
	sess := rt.sess
	rt.mu.Unlock()
	if err := rt.syncInputs(ctx); err != nil {
		return nil, fmt.Errorf("modern face: read the task's input requests from the store: %w", err) // retried
	}
	target := rt.f.pool.Target()
	if sess == nil {
		return rt.fail(fmt.Sprintf("the legacy upstream session of this task (on %s) ended with the bridge's previous run; a stdio upstream's sessions do not survive a restart, so the task can no longer be reached", target)), nil
	}
	raw, err := sess.GetTask(ctx, rt.upID)
	if err != nil && errorsIsGone(err) {
		var alt *legacyup.Session
		if raw, alt = rt.rebind(ctx); alt != nil {
			err = nil
		} else {
			return rt.fail(fmt.Sprintf("%v; the task was created on that session and can no longer be reached", rpc.As(err).Message)), nil
		}
	}
	if err != nil {
		var re *rpc.Error
		var te *legacyup.Error
		if errors.As(err, &re) && !errors.As(err, &te) && re.Code == rpc.CodeInvalidParams {
			return rt.fail(fmt.Sprintf("legacy upstream %s no longer knows the task (%s)", target, re.Message)), nil
		}
		return nil, err // transient: the watcher retries with backoff
	}
	g, err := legacy.DecodeGetTaskResult(raw)
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "legacy upstream %s: invalid tasks/get result: %s", target, rpc.As(err).Message)
	}
	rt.mu.Lock()
	rt.status = g.Task.Status
	sess = rt.sess
	rt.mu.Unlock()
	var outcome *translate.LegacyOutcome
	switch {
	case g.Task.Status == legacy.StatusInputRequired:
		rt.ensureStream(sess)
	case translate.NeedsPayload(g.Task.Status):
		o, err := rt.waitOutcome(ctx, sess)
		if err != nil {
			if errorsIsGone(err) {
				return rt.fail(fmt.Sprintf("%v; the task's result could not be fetched", rpc.As(err).Message)), nil
			}
			return nil, err
		}
		outcome = o
	}
	d, err := translate.DetailedTaskFromLegacy(raw, outcome, rt.outstanding())
	if err != nil {
		return nil, err
	}
	d.TaskID = rt.id
	if d.Status.IsTerminal() {
		rt.mu.Lock()
		rt.pending = map[string]translate.InputEntry{}
		rt.mu.Unlock()
	}
	return &d, nil
}

// rebind looks for the task on the principal's current session after its own
// session died: an upstream whose task store outlives sessions still knows it.
func (rt *taskRT) rebind(ctx context.Context) (json.RawMessage, *legacyup.Session) {
	cur, err := rt.f.pool.Session(ctx, rt.principal, rt.authorization)
	if err != nil {
		return nil, nil
	}
	rt.mu.Lock()
	old := rt.sess
	rt.mu.Unlock()
	if cur == old {
		return nil, nil
	}
	raw, err := cur.GetTask(ctx, rt.upID)
	if err != nil {
		return nil, nil
	}
	rt.mu.Lock()
	rt.sess = cur
	rt.streaming, rt.streamErr = false, nil
	rt.mu.Unlock()
	return raw, cur
}

// observe is the watcher's sink: every snapshot goes to sessionmap first,
// terminal ones with their payload (cached for later reads).
func (f *Face) observe(ctx context.Context, key watch.Key, snap watch.Snapshot) error {
	rt := f.taskRT(key.TaskID)
	if rt == nil || snap.Task == nil {
		return nil
	}
	d := rt.view(*snap.Task)
	st := sessionmap.Snapshot{Status: sessionmap.Status(d.Status), StatusMessage: d.StatusMessage, PollIntervalMs: d.PollIntervalMs}
	if t, err := modern.ParseTime(d.LastUpdatedAt); err == nil {
		st.LastUpdatedAt = t
	}
	if d.Status.IsTerminal() {
		st.Result = d.Result
		if d.Error != nil {
			b, err := json.Marshal(d.Error)
			if err != nil {
				return err
			}
			st.Error = b
		}
	}
	if _, err := f.store.UpdateStatus(ctx, rt.scope, rt.id, st); err != nil {
		return fmt.Errorf("modern face: record task status: %w", err)
	}
	if d.Status.IsTerminal() {
		f.mu.Lock()
		if f.tasks[rt.id] == rt {
			delete(f.tasks, rt.id) // later reads come from the store
		}
		f.mu.Unlock()
		rt.end() // and no wait upstream outlives the task
	}
	return nil
}

// lookup finds the caller's task; a foreign id is answered like an unknown
// one (M-60, M-65).
func (f *Face) lookup(ctx context.Context, c *call, taskID string) (sessionmap.Task, error) {
	rec, err := f.store.GetTask(ctx, c.scope(), taskID)
	if errors.Is(err, sessionmap.ErrNotFound) {
		return rec, modern.ErrTaskNotFound(taskID)
	}
	if err != nil {
		return rec, rpc.Errorf(rpc.CodeInternalError, "the bridge could not read its task store: %v", err)
	}
	return rec, nil
}

// current returns the task as tasks/get reports it now.
func (f *Face) current(ctx context.Context, c *call, rec sessionmap.Task) modern.DetailedTask {
	if rec.Status.Terminal() {
		return recordTask(rec)
	}
	rt := f.runtime(rec, c.principal, c.authorization, nil)
	// A slow upstream never holds a poll for long: after readTimeout the
	// recorded state answers, and the watcher keeps trying.
	gctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	snap, err := f.watch.Get(gctx, rt.key, 0)
	if err != nil || snap.Task == nil {
		// The upstream did not answer: the last recorded state, still
		// non-terminal (the watcher keeps trying).
		f.log.Debug("modern face: serving a recorded task state", "task", rec.ID, "err", err)
		return rt.view(recordTask(rec))
	}
	return rt.view(*snap.Task)
}

// tasksGet answers the DetailedTask (M-55, M-56, M-60, M-61).
func (f *Face) tasksGet(ctx context.Context, c *call) (json.RawMessage, error) {
	if _, err := translate.CheckModernTaskRequest(c.method, c.params); err != nil {
		return nil, err
	}
	p, err := modern.DecodeGetTaskParams(c.params)
	if err != nil {
		return nil, err
	}
	rec, err := f.lookup(ctx, c, p.TaskID)
	if err != nil {
		return nil, err
	}
	d := f.current(ctx, c, rec)
	if d.Status.IsTerminal() {
		f.audit(audit.ActionResult, c.principal, rec.ID, rec.ToolName, string(d.Status), 0)
	}
	// M-39: a client is never handed an input request it did not declare
	// the capability for on this request (capabilities are per request and
	// never inferred from the one that created the task, M-40); it learns
	// what to declare instead.
	if d.Status == modern.StatusInputRequired {
		if miss := undeclared(c.caps(), d.InputRequests); len(miss) > 0 {
			return nil, missingCapability(miss...)
		}
	}
	return marshalResult(modern.GetTaskResult{DetailedTask: d, Meta: f.resultMeta()})
}

// tasksUpdate relays the answers to outstanding input requests to the
// upstream by JSON-RPC id; unknown or answered keys are ignored, partial sets
// accepted, and the reply is the empty acknowledgement (M-58).
func (f *Face) tasksUpdate(ctx context.Context, c *call) (json.RawMessage, error) {
	if _, err := translate.CheckModernTaskRequest(c.method, c.params); err != nil {
		return nil, err
	}
	p, err := modern.DecodeUpdateTaskParams(c.params)
	if err != nil {
		return nil, err
	}
	rec, err := f.lookup(ctx, c, p.TaskID)
	if err != nil {
		return nil, err
	}
	ack := func() (json.RawMessage, error) {
		return marshalResult(modern.UpdateTaskResult{Meta: f.resultMeta()})
	}
	if rec.Status.Terminal() {
		return ack()
	}
	rt := f.runtime(rec, c.principal, c.authorization, nil)
	if err := f.answerTask(ctx, rt, p.InputResponses, c.method); err != nil {
		return nil, err
	}
	return ack()
}

// tasksCancel forwards the cancel upstream and acknowledges (M-59);
// cancelling a terminal task is the same acknowledgement.
func (f *Face) tasksCancel(ctx context.Context, c *call) (_ json.RawMessage, err error) {
	if _, err := translate.CheckModernTaskRequest(c.method, c.params); err != nil {
		return nil, err
	}
	p, err := modern.DecodeCancelTaskParams(c.params)
	if err != nil {
		return nil, err
	}
	outcome, tool := "cancelled", ""
	defer func() {
		code := int64(0)
		if err != nil {
			outcome, code = audit.Outcome(err)
		}
		f.audit(audit.ActionCancel, c.principal, p.TaskID, tool, outcome, code)
	}()
	rec, err := f.lookup(ctx, c, p.TaskID)
	if err != nil {
		return nil, err
	}
	tool = rec.ToolName
	ack := func() (json.RawMessage, error) {
		return marshalResult(modern.CancelTaskResult{Meta: f.resultMeta()})
	}
	if rec.Status.Terminal() {
		outcome = "terminal"
		return ack()
	}
	rt := f.runtime(rec, c.principal, c.authorization, nil)
	rt.mu.Lock()
	sess := rt.sess
	failed := rt.failure != nil
	rt.mu.Unlock()
	if sess == nil || failed {
		return ack()
	}
	resp, err := sess.CancelTask(ctx, rt.upID)
	if err != nil {
		if errorsIsGone(err) {
			return ack() // the next read reports the task failed, and why
		}
		return nil, upstreamError(c.method, err)
	}
	reply, err := translate.ModernCancelReply(resp, true, p.TaskID)
	if err != nil {
		return nil, err
	}
	reply.Meta = f.resultMeta()
	f.watch.Refresh(rt.key)
	return marshalResult(reply)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
