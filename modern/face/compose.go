package face

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/audit"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
)

// MRTR → task composition. A legacy tool that asks before it creates its task
// (an elicitation on the tools/call stream, then {"task": …}) becomes MRTR
// rounds that end in the CreateTaskResult (mrtr.go, M-54). A legacy tool that
// creates its task first and asks inside it — its CreateTaskResult already
// says input_required, the questions follow on the tasks/result side channel
// — is answered with the task: it exists upstream, the client asked for a
// task, and its questions reach tasks/get as inputRequests (M-55) and are
// answered with tasks/update. (The bridge once answered that shape with an
// MRTR round instead; a client then never saw the task it had asked for.)
//
// A requestState may still name a created task (resumeTask, taskFromState):
// its retry feeds the answers to the task's side channel and returns the
// CreateTaskResult, or another round while the task still asks.

// taskStatePrefix marks a requestState that names a created task (the other
// kind names a pending upstream call by a base32 token).
const taskStatePrefix = "task."

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
