package modernface

import (
	"context"
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/rpc"
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
