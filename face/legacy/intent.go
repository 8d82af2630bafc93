package legacyface

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Create intents (sessionmap.Intent): before a task-augmented tools/call
// goes upstream the face writes, durably, who asked for which tool and
// when, under the local task id it will give the task. The task record
// written before the client's answer (L-12, durable creation) carries the
// same id and settles the intent; the intent record itself is deleted by
// the next intent write (settleIntent). When the upstream's answer is
// lost (a reset or 5xx after it created the task, the process killed, a
// stop past the shutdown timeout) the intent stays, and `bridge tasks
// orphans` reports it: without the upstream's task id the bridge cannot
// cancel what the upstream may be running. When the id did arrive but the
// task cannot reach the client (its record cannot be written), the face
// cancels the upstream task at once and records that on the intent.
//
// Cost on the create path: one durable store write (the intent) before the
// upstream call; the deletion of settled intents rides on the next intent
// write (or Close), so it adds none.

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
	settled := s.b.settled.take()
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	err := is.PutIntent(sctx, in, settled...)
	cancel()
	if err != nil {
		s.b.settled.add(settled...) // the next write deletes them
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

// settleIntent marks the intent id settled: the call's outcome is known
// (its task record is written, or the upstream refused the call before
// creating anything). The record is deleted by the next intent write, in
// the same store write (sessionmap.IntentStore.PutIntent), or when the
// bridge closes: settling costs the create path no write of its own. A
// settled intent still in the store is no orphan (`bridge tasks orphans`
// skips an intent whose task record exists) and expires after
// sessionmap.IntentTTL.
func (s *session) settleIntent(id string) {
	if id == "" {
		return
	}
	s.b.settled.add(id)
}

// intentQueue holds settled intents whose records are still to delete.
type intentQueue struct {
	mu  sync.Mutex
	ids []string
}

// maxSettledQueue bounds the queue: beyond it a settled id is dropped (its
// record expires by itself).
const maxSettledQueue = 4096

func (q *intentQueue) add(ids ...string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range ids {
		if len(q.ids) < maxSettledQueue {
			q.ids = append(q.ids, id)
		}
	}
}

func (q *intentQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids := q.ids
	q.ids = nil
	return ids
}

// flushIntents deletes the settled intents still queued (Close).
func (b *Bridge) flushIntents() {
	is, ok := b.intentStore()
	ids := b.settled.take()
	if !ok || len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := is.DeleteIntents(ctx, ids...); err != nil {
		b.log.Debug("face: settled create intents not deleted; they expire by themselves", "err", err)
	}
}

// settledByAnswer reports whether an upstream error says the upstream
// created nothing: it answered with a JSON-RPC error, or refused the
// credential. A transport error, a 5xx or a cut connection leaves the
// outcome unknown (the intent stays).
func settledByAnswer(err error) bool {
	var ue *modernup.Error
	if errors.As(err, &ue) {
		// A failure on the way (upstream.Error): only a refused
		// credential is known to have created nothing.
		return errors.Is(err, modernup.ErrUnauthorized)
	}
	var re *jsonrpc.Error
	return errors.As(err, &re)
}

// cancelUndelivered cancels an upstream task whose id arrived but that
// the client will never see (its record could not be written), and records
// on the intent what the upstream was asked and what it answered. The
// outbox cannot do it: it works from the task record, which is missing.
func (s *session) cancelUndelivered(intentID string, t modern.Task, tool string, opts modernup.CallOptions) {
	b := s.b
	sc := s.scope()
	opts.OnNotify, opts.Header = nil, nil
	b.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		err := b.withCredential(ctx, sc.Principal, opts, func(o modernup.CallOptions) error {
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
