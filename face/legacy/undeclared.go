package legacyface

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// undeclaredInput decides whether an upstream task asks its legacy client for
// input the client did not declare at initialize (an elicitation without
// elicitation, sampling without sampling, ...). Such a request must never
// reach the client (L-82), and nobody else can answer it, so waiting would
// only hang until the task's ttl. The answer is the failure to record: the
// task's JSON-RPC error (a -32021 naming the missing capability, which
// tasks/result and a plain tools/call map to the legacy -32600 the bridge
// answers when the upstream refuses up front, L-67) and the statusMessage
// tasks/get shows (L-31). ok is false when every request can be delivered.
func undeclaredInput(tool string, reqs modern.InputRequests, caps modern.ClientCapabilities) (e *rpc.Error, statusMessage string, ok bool) {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		req := reqs[k]
		cerr := translate.CheckInputCapability(k, req, caps)
		if cerr == nil {
			continue
		}
		required, name, known := req.RequiredCapability()
		if !known {
			// No capability can be declared for it: the upstream's request
			// itself is wrong.
			msg := "The upstream asked for input no client can give; the task was stopped."
			return rpc.Errorf(rpc.CodeInternalError, "upstream %s", rpc.As(cerr).Message), msg, true
		}
		what := legacy.MethodToolsCall
		if tool != "" {
			what += " " + tool
		}
		msg := "The upstream asked for input this client did not declare (" + name +
			" in initialize capabilities); the task was stopped."
		return modern.ErrMissingRequiredClientCapability(required, what), msg, true
	}
	return nil, "", false
}

// failUndeclared ends rec failed because its upstream asks for input the
// client cannot give (undeclaredInput): the failure and the cancel owed
// upstream are recorded in one write (so a crash cannot lose the cancel),
// every waiter on the task is woken, and the outbox sends the cancel. It returns the
// effective record: the failure, or whatever terminal state won the race.
func (b *Bridge) failUndeclared(ctx context.Context, rec sessionmap.Task, e *rpc.Error, statusMessage string, opts modernup.CallOptions) sessionmap.Task {
	raw, err := json.Marshal(e)
	if err != nil {
		raw = nil
	}
	cur, err := b.store.UpdateStatus(ctx, rec.Scope, rec.ID, sessionmap.Snapshot{
		Status: sessionmap.StatusFailed, StatusMessage: statusMessage, Error: raw, LastUpdatedAt: time.Now(),
		CancelUpstream: true, // owed in the same write (outbox.go)
	})
	if err != nil {
		b.log.Warn("face: cannot record a task failure; it will be retried on the next read", "upstream", b.target, "err", err)
		return rec
	}
	if cur.Status != sessionmap.StatusFailed || !cur.UpstreamCancelPending {
		return cur // another outcome won
	}
	b.taskEnded(cur)
	b.signalPin(rec.ID)
	b.cancelUpstream(cur, opts)
	return cur
}

// endUndeclared fails cur when the upstream snapshot d asks for input this
// session's client did not declare (undeclaredInput), so that neither a
// tasks/result nor a plain tools/call waits for an answer that cannot come
// and tasks/get shows the failure at once. ok reports that the task ended
// (ended is its terminal record).
func (s *session) endUndeclared(ctx context.Context, cur sessionmap.Task, d modern.DetailedTask, opts modernup.CallOptions) (ended sessionmap.Task, ok bool) {
	if d.Status != modern.StatusInputRequired || len(d.InputRequests) == 0 {
		return cur, false
	}
	e, msg, bad := undeclaredInput(cur.ToolName, d.InputRequests, s.clientCaps())
	if !bad {
		return cur, false
	}
	ended = s.b.failUndeclared(ctx, cur, e, msg, opts)
	return ended, !live(ended)
}

// lostTask is the answer when a waited-on record vanished (it expired): for
// tasks/result the usual -32602 for its id (L-65); for a plain tools/call,
// whose client never saw a task id, an error that names none.
func lostTask(rec sessionmap.Task, mode awaitMode) error {
	if mode == awaitPlain {
		return rpc.Errorf(rpc.CodeInternalError,
			"the upstream did not finish this tools/call within its task's ttl; call the tool again, or use a task-augmented call for long work")
	}
	return legacy.TaskNotFoundError(rec.ID)
}
