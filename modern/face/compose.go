package face

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/audit"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
)

// MRTR → task composition from a legacy server that creates its task first
// and asks inside it before it answers the creating tools/call: its
// CreateTaskResult already reports input_required, and the requests follow
// on the tasks/result side channel. A 2026-07-28 server finishes its MRTR
// rounds before it creates the task (M-54), so a modern client expects an
// InputRequiredResult there, not a task. The bridge therefore waits (briefly)
// for those requests and answers the creating tools/call with an MRTR round
// whose requestState binds the legacy task (HMAC over the local task id,
// principal, method and tool, M-48); the retry's inputResponses go to the
// side channel and its answer is the CreateTaskResult. A task created working
// that asks later (the same side channel, after the creation was answered)
// is exposed on tasks/get as its inputRequests instead (M-55): nothing on the
// legacy wire says it wanted an MRTR round.

// taskStatePrefix marks a requestState that names a created task (the other
// kind names a pending upstream call by a base32 token).
const taskStatePrefix = "task."

// composeWait bounds how long the creating tools/call waits for the side
// channel to deliver the requests of a task created input_required (a legacy
// server may re-check its queue only once per pollInterval).
const composeWait = 5 * time.Second

// sealTask renders the requestState naming task id for c's retry.
func (f *Face) sealTask(c *call, id, name string) string {
	token := taskStatePrefix + id
	return token + "." + f.mac(token, c.principal, c.method, name)
}

// taskFromState returns the task id a requestState names, when it is a task
// state sealed for this caller, method and tool.
func (f *Face) taskFromState(state string, c *call, name string) (string, bool) {
	rest, ok := strings.CutPrefix(state, taskStatePrefix)
	if !ok {
		return "", false
	}
	id, sum, ok := strings.Cut(rest, ".")
	if !ok || !hmac.Equal([]byte(sum), []byte(f.mac(taskStatePrefix+id, c.principal, c.method, name))) {
		return "", false
	}
	return id, true
}

// composeRound decides the answer to a tools/call whose upstream just created
// rt with status upStatus: an MRTR round when the task already asked for
// input, else nil (the CreateTaskResult). A request the client did not
// declare the capability for is refused with -32021 and the task cancelled
// upstream: nobody could ever answer it (M-39).
func (f *Face) composeRound(ctx context.Context, c *call, rt *taskRT, upStatus legacy.TaskStatus, name string) (json.RawMessage, error) {
	if upStatus != legacy.StatusInputRequired {
		return nil, nil
	}
	rt.mu.Lock()
	sess := rt.sess
	rt.mu.Unlock()
	rt.ensureStream(sess) // the requests arrive on the task's blocking tasks/result
	wctx, cancel := context.WithTimeout(ctx, composeWait)
	defer cancel()
	for {
		rt.mu.Lock()
		pending, done := rt.outstandingLocked(), rt.outcome != nil || rt.failure != nil || (!rt.streaming && rt.streamErr != nil)
		ch := rt.changed
		rt.mu.Unlock()
		if len(pending) > 0 {
			if miss := undeclared(c.caps(), pending); len(miss) > 0 {
				f.abandon(rt, "the client cannot answer the task's input requests")
				return nil, missingCapability(miss...)
			}
			f.armCompose(rt)
			f.log.Debug("modern face: a new task asks for input; answering its creation with an MRTR round", "task", rt.id)
			return marshalResult(modern.InputRequiredResult{
				InputRequests: pending, RequestState: modern.RequestState(f.sealTask(c, rt.id, name)), Meta: f.resultMeta(),
			})
		}
		if done {
			return nil, nil
		}
		select {
		case <-ch:
		case <-wctx.Done():
			return nil, nil // nothing came: the task, whose tasks/get shows what comes later
		}
	}
}

// resumeTask serves the retry of a composition round: the answers go to the
// task's side channel (as tasks/update would send them), then the client
// gets the CreateTaskResult, or another round while the task still asks.
func (f *Face) resumeTask(ctx context.Context, c *call, id, name string, responses modern.InputResponses) (json.RawMessage, error) {
	rec, err := f.store.GetTask(ctx, c.scope(), id)
	if err != nil {
		return nil, nil // gone (restart, expiry): start afresh (M-48: re-ask rather than error)
	}
	f.disarmCompose(id)
	if !rec.Status.Terminal() {
		rt := f.runtime(rec, c.principal, c.authorization, nil)
		if err := f.answerTask(ctx, rt, responses, c.method); err != nil {
			return nil, err
		}
		if pending := rt.outstanding(); len(pending) > 0 {
			// Missing answers: ask again rather than fail (M-48).
			f.armCompose(rt)
			return marshalResult(modern.InputRequiredResult{
				InputRequests: pending, RequestState: modern.RequestState(f.sealTask(c, id, name)), Meta: f.resultMeta(),
			})
		}
	}
	t := recordTask(rec).Task
	if !t.Status.IsTerminal() {
		t.Status = modern.StatusWorking
	}
	// The client learns the task's id only now.
	f.audit(audit.ActionCreate, c.principal, rec.ID, rec.ToolName, "created", 0)
	return marshalResult(modern.CreateTaskResult{Task: t, Meta: f.resultMeta()})
}

// armCompose (re)starts the expiry of a composition round: a client that
// never retries never learns the task id, so the task is cancelled upstream
// and recorded cancelled after MRTRTimeout (M-48: do not assume a retry).
func (f *Face) armCompose(rt *taskRT) {
	rt.mu.Lock()
	answered := len(rt.answered)
	rt.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := f.composing[rt.id]; t != nil {
		t.Stop()
	}
	f.composing[rt.id] = time.AfterFunc(f.opts.MRTRTimeout, func() {
		f.mu.Lock()
		delete(f.composing, rt.id)
		f.mu.Unlock()
		if f.retriedElsewhere(rt, answered) {
			return
		}
		f.abandon(rt, "the client never retried the MRTR round that asked for the task's input")
	})
}

// retriedElsewhere reports whether a composition round armed when the task
// had answered keys was retried through another bridge process since: the
// store then holds more answers, or the task ended. That process answers the
// client; the task is not abandoned.
func (f *Face) retriedElsewhere(rt *taskRT, answered int) bool {
	ctx, cancel := context.WithTimeout(f.ctx, readTimeout)
	defer cancel()
	rec, err := f.store.GetTask(ctx, rt.scope, rt.id)
	return err == nil && (rec.Status.Terminal() || len(rec.AnsweredKeys) > answered)
}

func (f *Face) disarmCompose(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := f.composing[id]; t != nil {
		t.Stop()
		delete(f.composing, id)
	}
}

// abandon cancels a task whose id no client holds, upstream and in the store.
func (f *Face) abandon(rt *taskRT, why string) {
	f.log.Info("modern face: cancelling a task no client can reach", "reason", why)
	ctx, cancel := context.WithTimeout(f.ctx, readTimeout)
	defer cancel()
	rt.mu.Lock()
	sess := rt.sess
	rt.mu.Unlock()
	if sess != nil {
		_, _ = sess.CancelTask(ctx, rt.upID)
	}
	if _, err := f.store.PinCancel(ctx, rt.scope, rt.id); err != nil && !isTerminalErr(err) {
		f.log.Warn("modern face: could not record an abandoned task as cancelled", "err", err)
	}
}

func isTerminalErr(err error) bool { return errors.Is(err, sessionmap.ErrTerminal) }

// answerTask relays the answers to a task's outstanding input requests to the
// upstream by JSON-RPC id: keys not outstanding are ignored, a partial set is
// accepted, and each key is recorded answered durably before it is sent, so
// it is answered upstream at most once even when two answers race (M-58).
func (f *Face) answerTask(ctx context.Context, rt *taskRT, responses modern.InputResponses, method string) error {
	// The request may have reached another bridge process than the one
	// that received the input requests (inputs.go).
	if err := rt.syncInputs(ctx); err != nil {
		return rpc.Errorf(rpc.CodeInternalError, "the bridge could not read the task's input requests from its store: %v", err)
	}
	rt.mu.Lock()
	outstanding := rt.outstandingLocked()
	accept, _ := translate.SelectInputResponses(outstanding, rt.answered, responses)
	type answer struct {
		key   string
		entry translate.InputEntry
		raw   json.RawMessage
	}
	var answers []answer
	for _, k := range accept.Keys() {
		e := rt.pending[k]
		raw, err := translate.InputResponseToLegacy(e.Request, accept[k])
		if err != nil {
			rt.mu.Unlock()
			return rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: inputResponses[%q]: %s", k, rpc.As(err).Message)
		}
		answers = append(answers, answer{k, e, raw})
	}
	sess := rt.sess
	rt.mu.Unlock()
	if len(answers) == 0 {
		return nil
	}
	keys := make([]string, len(answers))
	for i, a := range answers {
		keys[i] = a.key
	}
	fresh, err := f.store.RecordAnswered(ctx, rt.scope, rt.id, keys)
	if err != nil {
		return rpc.Errorf(rpc.CodeInternalError, "the bridge could not record the answers: %v", err)
	}
	isFresh := map[string]bool{}
	for _, k := range fresh {
		isFresh[k] = true
	}
	rt.mu.Lock()
	for _, a := range answers {
		rt.answered[a.key] = true
		delete(rt.pending, a.key)
	}
	rt.notifyLocked()
	rt.mu.Unlock()
	var errs []error
	for _, a := range answers {
		if !isFresh[a.key] || sess == nil {
			continue
		}
		err := sess.Respond(ctx, a.entry.LegacyID, a.raw, nil)
		if err != nil {
			errs = append(errs, err)
			o, code := audit.Outcome(upstreamError(method, err))
			f.audit(audit.ActionInput, rt.principal, rt.id, "", o, code)
		} else {
			f.audit(audit.ActionInput, rt.principal, rt.id, "", audit.InputAction(accept[a.key]), 0)
		}
	}
	f.watch.Refresh(rt.key)
	if len(errs) > 0 && !errorsIsGone(errs[0]) {
		// A session that died shows as a failed task on the next read.
		return upstreamError(method, errs[0])
	}
	return nil
}
