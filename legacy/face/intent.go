package face

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/modern/upstream"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Create intents (sessionmap.Intent): before a task-augmented tools/call
// goes upstream the face writes, durably, who asked for which tool and
// when, under the local task id it will give the task. The task record
// written before the client's answer (L-12, durable creation) carries the
// same id and settles the intent; the intent record itself is deleted
// after the answer, off the client's path. When the upstream's answer is
// lost (a reset or 5xx after it created the task, the process killed, a
// stop past the shutdown timeout) the intent stays, and `bridge tasks
// orphans` reports it: without the upstream's task id the bridge cannot
// cancel what the upstream may be running. When the id did arrive but the
// task cannot reach the client (its record cannot be written), the face
// cancels the upstream task at once and records that on the intent.
//
// Cost on the create path: one durable store write (the intent) before the
// upstream call; the deletion runs in the background.

// intentStore returns the store's intent part, if it has one (a metered
// wrapper over a store without intents reports none).
func (b *Bridge) intentStore() (sessionmap.IntentStore, bool) {
	is, ok := b.store.(sessionmap.IntentStore)
	if !ok {
		return nil, false
	}
	if h, ok := b.store.(interface{ HasIntents() bool }); ok && !h.HasIntents() {
		return nil, false
	}
	return is, true
}

// writeIntent records the intent of a task-creating call under a fresh
// local task id, which it returns ("" when the store keeps no intents).
// A store that cannot take the intent could not take the task record
// either: the call is refused before anything runs upstream.
func (s *session) writeIntent(ctx context.Context, ri *reqInfo, tool string) (string, error) {
	is, ok := s.b.intentStore()
	if !ok {
		return "", nil
	}
	in := sessionmap.Intent{
		ID:        sessionmap.NewTaskID(),
		Scope:     s.scope(),
		Upstream:  s.b.target,
		RequestID: requestIDText(ri.id),
		ToolName:  tool,
	}
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	err := is.PutIntent(sctx, in)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", storeUnavailable(err)
	}
	return in.ID, nil
}

func requestIDText(id jsonrpc.ID) string {
	if !id.IsValid() {
		return ""
	}
	return fmt.Sprint(id.Raw())
}

// settleIntent deletes the intent id in the background: the call's
// outcome is known (its task record is written, or the upstream refused
// the call before creating anything). A deletion that fails leaves a record
// whose task record exists (settled) or a refusal reported as a candidate;
// the record expires after sessionmap.IntentTTL.
func (s *session) settleIntent(id string) {
	is, ok := s.b.intentStore()
	if id == "" || !ok {
		return
	}
	s.b.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		if err := is.DeleteIntent(ctx, id); err != nil {
			s.b.log.Debug("face: create intent not deleted; it expires by itself", "err", err)
		}
	})
}

// settledByAnswer reports whether an upstream error says the upstream
// created nothing: it answered with a JSON-RPC error, or refused the
// credential. A transport error, a 5xx or a cut connection leaves the
// outcome unknown (the intent stays).
func settledByAnswer(err error) bool {
	var ue *upstream.Error
	if errors.As(err, &ue) {
		// A failure on the way (upstream.Error): only a refused
		// credential is known to have created nothing.
		return errors.Is(err, upstream.ErrUnauthorized)
	}
	var re *jsonrpc.Error
	return errors.As(err, &re)
}

// cancelUndelivered cancels an upstream task whose id arrived but that
// the client will never see (its record could not be written), and records
// on the intent what the upstream was asked and what it answered. The
// outbox cannot do it: it works from the task record, which is missing.
func (s *session) cancelUndelivered(intentID string, t modern.Task, tool string, opts upstream.CallOptions) {
	b := s.b
	sc := s.scope()
	opts.OnNotify, opts.Header = nil, nil
	b.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		err := b.withCredential(ctx, sc.Principal, opts, func(o upstream.CallOptions) error {
			return b.up.CancelTask(ctx, t.TaskID, o)
		})
		b.reportUpstream(modern.MethodTasksCancel, start, err)
		outcome := sessionmap.IntentCancelled
		if err != nil && !upstreamSettled(err) {
			outcome = sessionmap.IntentCancelFailed
			b.log.Warn("upstream task created for a call the bridge could not record, and the upstream did not take its cancel; it may run on (bridge tasks orphans lists it)",
				"upstream", b.target, "tool", tool)
		} else {
			b.log.Info("upstream task cancelled: the bridge could not record it, so no client could have followed it",
				"upstream", b.target, "tool", tool)
		}
		is, ok := b.intentStore()
		if !ok || intentID == "" {
			return
		}
		in := sessionmap.Intent{ID: intentID, Scope: sc, Upstream: b.target, ToolName: tool,
			UpstreamTaskID: t.TaskID, Outcome: outcome}
		// Kept even when cancelled: the operator sees what happened
		// (bridge tasks orphans shows the outcome).
		if err := is.PutIntent(ctx, in); err != nil {
			b.log.Debug("face: outcome of an undelivered task not recorded", "err", err)
		}
	})
}
