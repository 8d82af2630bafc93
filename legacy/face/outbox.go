package face

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/outbox"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/modern/upstream"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// cancelSettled decides, from one upstream tasks/cancel attempt, whether the
// bridge still owes the upstream that cancel: no after an acknowledgement,
// and no after a JSON-RPC answer other than an internal error (-32602: the
// task is unknown or already over there; -32601: the upstream has no
// tasks/cancel, and never will). An unreachable upstream, a broken answer
// or a -32603 are worth retrying (L-57: try to stop the execution).
func cancelSettled(err error) bool {
	// Transport failures, timeouts and invalid answers are -32603 too
	// (upstream.Error unwraps to one).
	return err == nil || rpc.CodeOf(err) != rpc.CodeInternalError
}

// cancelUpstream delivers the tasks/cancel the bridge owes the upstream for
// rec (PinCancel, or a failure the bridge recorded with CancelUpstream, set
// rec.UpstreamCancelPending in the store first). The outbox retries it with
// backoff until the upstream settles it (cancelSettled), the record expires,
// or the bridge stops; the store then still says it is owed, and the next
// bridge delivers it (resumeOwed). The local state never waits for it (L-58,
// L-59).
//
// The first attempt is made before cancelUpstream returns, so a reachable
// upstream has been asked to stop before the client gets its answer.
func (b *Bridge) cancelUpstream(rec sessionmap.Task, opts upstream.CallOptions) {
	if rec.UpstreamTaskID == "" || b.outbox == nil {
		return
	}
	opts.OnNotify, opts.Header = nil, nil
	warned, tries := false, 0
	b.outbox.DeliverFirst(rec.ID, modern.MethodTasksCancel, func(ctx context.Context) (bool, error) {
		if tries++; tries > 1 {
			// Another replica may have delivered it meanwhile (it held
			// the delivery's lease, outbox.Config.Leases): the store says.
			cur, gerr := b.store.GetTask(ctx, rec.Scope, rec.ID)
			if errors.Is(gerr, sessionmap.ErrNotFound) || gerr == nil && !cur.UpstreamCancelPending {
				return true, nil
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		start := time.Now()
		err := b.up.CancelTask(cctx, rec.UpstreamTaskID, opts)
		cancel()
		b.reportUpstream(modern.MethodTasksCancel, start, err)
		if !cancelSettled(err) {
			if ctx.Err() != nil {
				return true, nil // the bridge stops; the store keeps the debt
			}
			if _, gerr := b.store.GetTask(ctx, rec.Scope, rec.ID); errors.Is(gerr, sessionmap.ErrNotFound) {
				return true, nil // expired here: the upstream's ttl ends it too
			}
			if !warned {
				warned = true
				b.log.Warn("upstream did not take a task cancel; retrying with backoff until it does (the task is already cancelled for the client)",
					"upstream", b.target, "err", rpc.As(err).Message)
			}
			return false, err
		}
		if err != nil {
			b.log.Info("upstream refused a task cancel: the task is over or unknown there", "upstream", b.target, "err", rpc.As(err).Message)
		} else if warned {
			b.log.Info("upstream took a task cancel after retries", "upstream", b.target)
		}
		if _, serr := b.store.SettleUpstream(ctx, rec.Scope, rec.ID); serr != nil && !errors.Is(serr, sessionmap.ErrNotFound) {
			if ctx.Err() != nil {
				return true, nil
			}
			return false, serr // the cancel is sent again; the upstream ignores a second one
		}
		return true, nil
	})
}

// owed are the upstream cancels a previous process left undelivered whose
// owner has a principal: the upstream binds tasks to the owner's credentials,
// which the store never holds, so they go out with the first request that
// carries that principal's Authorization.
type owed struct {
	mu          sync.Mutex
	byPrincipal map[string][]sessionmap.Task
}

// resumeOwed reads what the store says is owed upstream and delivers it:
// right away for tasks without a principal, with the owner's next request
// otherwise (deliverOwed).
func (b *Bridge) resumeOwed(ctx context.Context) {
	recs, err := b.store.PendingUpstream(ctx)
	if err != nil {
		b.log.Warn("cannot read the upstream cancels a previous run still owed; they are retried when their tasks are next used", "err", err)
	}
	for _, rec := range recs {
		if rec.Direction != sessionmap.LegacyToModern || rec.Upstream != b.target {
			continue
		}
		if rec.Scope.Principal == "" {
			b.cancelUpstream(rec, upstream.CallOptions{})
			continue
		}
		b.owed.mu.Lock()
		if b.owed.byPrincipal == nil {
			b.owed.byPrincipal = map[string][]sessionmap.Task{}
		}
		b.owed.byPrincipal[rec.Scope.Principal] = append(b.owed.byPrincipal[rec.Scope.Principal], rec)
		b.owed.mu.Unlock()
	}
	if len(recs) > 0 {
		b.log.Info("resuming upstream cancels a previous run still owed", "upstream", b.target, "count", len(recs))
	}
}

// deliverOwed hands the owed cancels of the request's principal to the
// outbox, with the request's credentials.
func (s *session) deliverOwed(ri *reqInfo) {
	if ri == nil || ri.authz == "" || s.principal == "" {
		return
	}
	b := s.b
	b.owed.mu.Lock()
	recs := b.owed.byPrincipal[s.principal]
	delete(b.owed.byPrincipal, s.principal)
	b.owed.mu.Unlock()
	if len(recs) == 0 {
		return
	}
	opts, _, err := s.callOptions(ri)
	if err != nil {
		return
	}
	for _, rec := range recs {
		b.cancelUpstream(rec, opts)
	}
}

// startOutbox creates the outbox and, in the background, resumes what a
// previous process left owed.
func (b *Bridge) startOutbox() {
	b.outbox = outbox.New(b.cfg.Outbox)
	b.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		defer context.AfterFunc(b.drain, cancel)()
		b.resumeOwed(ctx)
	})
}
