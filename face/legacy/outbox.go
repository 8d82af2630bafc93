package legacyface

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/outbox"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// upstreamSettled decides, from one upstream tasks/cancel or tasks/update
// attempt, whether the bridge still owes the upstream that side effect: no
// after an acknowledgement, and no after a JSON-RPC answer other than an
// internal error (-32602: the task is unknown or already over there, or the
// answered key is not outstanding any more; -32601: the upstream has no such
// method, and never will). An unreachable upstream, a broken answer or a
// -32603 are worth retrying (L-57: try to stop the execution; M-28: fulfil
// the input requests).
func upstreamSettled(err error) bool {
	// Transport failures, timeouts and invalid answers are -32603 too
	// (upstream.Error unwraps to one).
	return err == nil || rpc.CodeOf(err) != rpc.CodeInternalError
}

// cancelUpstream delivers the tasks/cancel the bridge owes the upstream for
// rec (PinCancel, or a failure the bridge recorded with CancelUpstream, set
// rec.UpstreamCancelPending in the store first). The outbox retries it with
// backoff until the upstream settles it (upstreamSettled), the record expires,
// or the bridge stops; the store then still says it is owed, and the next
// bridge delivers it (resumeOwed). The local state never waits for it (L-58,
// L-59).
//
// The first attempt is made before cancelUpstream returns, so a reachable
// upstream has been asked to stop before the client gets its answer.
func (b *Bridge) cancelUpstream(rec sessionmap.Task, opts modernup.CallOptions) {
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
		err := b.withCredential(cctx, rec.Scope.Principal, opts, func(o modernup.CallOptions) error {
			return b.up.CancelTask(cctx, rec.UpstreamTaskID, o)
		})
		cancel()
		b.reportUpstream(modern.MethodTasksCancel, start, err)
		if !upstreamSettled(err) {
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

// answerUpstream delivers the answer to one input key that the store holds
// as owed (OweAnswers wrote it with the key answered): tasks/update with
// that key alone, retried by the outbox with backoff until the upstream
// acknowledges it (or refuses it for good, upstreamSettled), the task ends
// or expires here, or the bridge stops; the store then still holds the
// payload, and the next bridge delivers it (resumeOwed) without asking the
// client again (M-28, M-30). fresh says the caller has just recorded it.
//
// The upstream gets it at most once, across replicas and restarts
// (outbox.DeliverOnce): one replica at a time holds the key's claim, and an
// attempt that may follow an earlier one (a retry after a lost answer, a
// replica that died between sending and settling, a debt resumed from the
// store) first re-reads the store and asks the upstream whether it still
// waits for the key (awaitsKey); when it does not, the debt is settled
// without sending. Once acknowledged it is never sent again: the payload is
// settled, and a failed settle is retried on its own.
func (b *Bridge) answerUpstream(rec sessionmap.Task, key string, payload json.RawMessage, opts modernup.CallOptions, fresh bool) {
	if rec.UpstreamTaskID == "" || b.outbox == nil {
		return
	}
	opts.OnNotify, opts.Header = nil, nil
	warned, acked := false, false
	b.outbox.DeliverOnce(rec.ID+"\x00"+key, modern.MethodTasksUpdate, fresh, func(ctx context.Context, first bool) (bool, error) {
		if !acked && !first {
			// Settled meanwhile (by the replica that held the claim
			// before, or before a restart)?
			cur, gerr := b.store.GetTask(ctx, rec.Scope, rec.ID)
			if errors.Is(gerr, sessionmap.ErrNotFound) || gerr == nil && cur.OwedAnswers[key] == nil {
				return true, nil
			}
			if gerr != nil {
				if ctx.Err() != nil {
					return true, nil // the bridge stops; the store keeps the debt
				}
				return false, gerr
			}
			waiting, err := b.awaitsKey(ctx, rec, key, opts)
			if err != nil {
				if ctx.Err() != nil {
					return true, nil
				}
				return false, err
			}
			if !waiting {
				acked = true
				b.log.Info("upstream no longer waits for a client's input answer that an earlier attempt sent; not sending it again",
					"upstream", b.target, "task", rec.ID)
			}
		}
		if !acked {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			start := time.Now()
			err := b.withCredential(cctx, rec.Scope.Principal, opts, func(o modernup.CallOptions) error {
				return b.up.UpdateTask(cctx, rec.UpstreamTaskID, modern.InputResponses{key: payload}, o)
			})
			cancel()
			b.reportUpstream(modern.MethodTasksUpdate, start, err)
			if !upstreamSettled(err) {
				if ctx.Err() != nil {
					return true, nil // the bridge stops; the store keeps the debt
				}
				if cur, gerr := b.store.GetTask(ctx, rec.Scope, rec.ID); errors.Is(gerr, sessionmap.ErrNotFound) || gerr == nil && cur.OwedAnswers[key] == nil {
					return true, nil // expired, ended or settled meanwhile: nothing is owed
				}
				if !warned {
					warned = true
					b.log.Warn("upstream did not take a client's input answer; retrying with backoff until it does",
						"upstream", b.target, "err", rpc.As(err).Message)
				}
				return false, err
			}
			acked = true
			if err != nil {
				b.log.Warn("upstream refused a client's input answer: the task is over there or no longer waits for it",
					"upstream", b.target, "err", rpc.As(err).Message)
			} else {
				b.watch.Refresh(b.keyOf(rec)) // the task's next state, now
				if warned {
					b.log.Info("upstream took a client's input answer after retries", "upstream", b.target)
				}
			}
		}
		if _, serr := b.store.SettleAnswers(ctx, rec.Scope, rec.ID, []string{key}); serr != nil && !errors.Is(serr, sessionmap.ErrNotFound) {
			if ctx.Err() != nil {
				return true, nil
			}
			return false, serr // only the settle is tried again
		}
		return true, nil
	})
}

// awaitsKey asks the upstream whether its task still waits for input key
// (input_required with key among its inputRequests). A task the upstream
// no longer knows, or refuses to show (upstreamSettled), waits for nothing.
func (b *Bridge) awaitsKey(ctx context.Context, rec sessionmap.Task, key string, opts modernup.CallOptions) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d *modern.DetailedTask
	start := time.Now()
	err := b.withCredential(cctx, rec.Scope.Principal, opts, func(o modernup.CallOptions) error {
		var gerr error
		d, gerr = b.up.GetTask(cctx, rec.UpstreamTaskID, o)
		return gerr
	})
	b.reportUpstream(modern.MethodTasksGet, start, err)
	if err != nil {
		if upstreamSettled(err) {
			return false, nil
		}
		return false, err
	}
	if d.Status != modern.StatusInputRequired {
		return false, nil
	}
	_, ok := d.InputRequests[key]
	return ok, nil
}

// deliverDebts hands everything rec owes the upstream to the outbox, with
// opts (the owner's credentials when it has a principal).
func (b *Bridge) deliverDebts(rec sessionmap.Task, opts modernup.CallOptions) {
	if rec.UpstreamCancelPending {
		b.cancelUpstream(rec, opts)
	}
	for _, k := range slices.Sorted(maps.Keys(rec.OwedAnswers)) {
		b.claimSent(rec.ID, k)
		b.answerUpstream(rec, k, rec.OwedAnswers[k], opts, false)
	}
}

// owed are the upstream side effects (cancels, input answers) a previous
// process left undelivered whose owner has a principal: the upstream binds
// tasks to the owner's credentials, so, unless the store holds a sealed one
// (creds.go), they go out with the first request that carries that
// principal's Authorization.
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
		b.log.Warn("cannot read the upstream cancels and input answers a previous run still owed; they are retried when their tasks are next used", "err", err)
	}
	n := 0
	for _, rec := range recs {
		if rec.Direction != sessionmap.LegacyToModern || rec.Upstream != b.target {
			continue
		}
		n++
		if _, ok := b.creds.Current(ctx, rec.Scope.Principal); rec.Scope.Principal == "" || ok {
			// No principal, or its credential is in the store: the outbox
			// calls with the freshest one (creds.go).
			b.deliverDebts(rec, modernup.CallOptions{})
			continue
		}
		b.owed.mu.Lock()
		if b.owed.byPrincipal == nil {
			b.owed.byPrincipal = map[string][]sessionmap.Task{}
		}
		b.owed.byPrincipal[rec.Scope.Principal] = append(b.owed.byPrincipal[rec.Scope.Principal], rec)
		b.owed.mu.Unlock()
	}
	if n > 0 {
		b.log.Info("resuming upstream cancels and input answers a previous run still owed", "upstream", b.target, "tasks", n)
	}
}

// deliverOwed hands the owed side effects of the request's principal to the
// outbox, with the request's credentials.
func (s *session) deliverOwed(ri *reqInfo) {
	if ri == nil || ri.authz == "" || s.principal == "" {
		return
	}
	s.noteCredential(ri)
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
		b.deliverDebts(rec, opts)
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
