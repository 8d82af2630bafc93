package legacyface

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The one rule every wait on an upstream task follows (the blocking wait of
// await, the parked waits of a task's hub): given the record as just read,
// the watcher's latest snapshot and what the waiting session was already
// shown, a wait answers, fails, presents input or keeps waiting. A task is
// over for its waits as soon as it is terminal by any route, whichever
// comes first:
//
//   - the record says so (a completion recorded by the watcher, by another
//     replica or before a restart; a cancel pinned, L-58);
//   - the snapshot says so, pushed (notifications/tasks, M-33) or polled
//     (M-24): the watchers hand a terminal snapshot to waiters before the
//     durable write (observe), and the watcher ends with it, so a wait that
//     kept waiting for the write would wait for ever once the write is late,
//     lost or refused;
//   - the upstream no longer knows the task (-32602 from tasks/get after it
//     restarted empty or purged it, M-27): failed, saying so;
//   - the record expired (createdAt + ttl, L-64, L-65): the task is gone.
//
// A store that cannot be read is none of these: the task may well be alive,
// so the wait fails with the retryable "task store unavailable", never with
// "Task not found" (which tells a client to forget the task).
//
// Pure: no I/O, no bridge state; callers read the store and the watcher and
// act on the step.

// waitKind is what a wait does next.
type waitKind int

const (
	waitKeep    waitKind = iota // nothing new: keep waiting
	waitAnswer                  // the task is over: answer from waitStep.rec (outcome)
	waitFail                    // answer waitStep.err
	waitPresent                 // present waitStep.present to the client, keep waiting
)

// waitInput is what the rule decides from.
type waitInput struct {
	// rec and recErr are the record as just read (after snap arrived, so a
	// cancel pinned meanwhile is seen).
	rec    sessionmap.Task
	recErr error
	// snap is the watcher's latest snapshot (zero: none, or not relevant).
	snap watch.Snapshot
	// target names the upstream in the error of a task it no longer knows.
	target string
	// shown reports whether this session was already shown input key k, or
	// this process already answered it (nil: neither).
	shown func(k string) bool
}

// waitStep is the rule's decision.
type waitStep struct {
	kind    waitKind
	rec     sessionmap.Task // waitAnswer: the terminal record to answer from; otherwise the record as read
	err     error           // waitFail
	present []string        // waitPresent: sorted input keys
	lost    bool            // waitFail: the record is gone (expired); err is nil, the caller names it per mode (lostTask)
}

// decideWait is the rule (see above).
func decideWait(in waitInput) waitStep {
	switch {
	case errors.Is(in.recErr, sessionmap.ErrNotFound):
		return waitStep{kind: waitFail, lost: true}
	case in.recErr != nil:
		return waitStep{kind: waitFail, err: storeUnavailable(in.recErr)}
	}
	cur := in.rec
	if !live(cur) {
		return waitStep{kind: waitAnswer, rec: cur}
	}
	if sn, ok := terminalSnapshotOf(in.target, in.snap); ok {
		return waitStep{kind: waitAnswer, rec: mergeTerminal(cur, sn)}
	}
	t := in.snap.Task
	if t == nil || t.Status != modern.StatusInputRequired {
		return waitStep{kind: waitKeep, rec: cur}
	}
	var keys []string
	for k := range t.InputRequests {
		if answered(cur, k) || (in.shown != nil && in.shown(k)) {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return waitStep{kind: waitKeep, rec: cur}
	}
	sort.Strings(keys)
	return waitStep{kind: waitPresent, rec: cur, present: keys}
}

// mergeTerminal is the live record rec ended by the terminal snapshot sn, as
// the store will record it (a pinned cancel would have made rec not live).
func mergeTerminal(rec sessionmap.Task, sn sessionmap.Snapshot) sessionmap.Task {
	rec.Status, rec.StatusMessage = sn.Status, sn.StatusMessage
	rec.Result, rec.Error = sn.Result, sn.Error
	return rec
}

// terminalSnapshotOf is the record snapshot a terminal watcher snapshot ends
// the task with: the upstream's terminal state, or failed when the upstream
// no longer knows the task (expired, purged, or lost in a restart, M-27) —
// with an error saying so, not the upstream's message, which names its own
// task id, never shown to the client.
func terminalSnapshotOf(target string, snap watch.Snapshot) (sessionmap.Snapshot, bool) {
	switch {
	case snap.Gone != nil:
		e, _ := json.Marshal(rpc.Errorf(rpc.CodeInternalError, "upstream %s no longer knows this task: it expired, was purged or was lost in a restart there", target))
		return sessionmap.Snapshot{Status: sessionmap.StatusFailed, StatusMessage: "The upstream no longer knows this task.", Error: e}, true
	case snap.Task != nil && sessionmap.Status(snap.Task.Status).Terminal():
		sn, err := snapshotOf(snap.Task)
		return sn, err == nil
	}
	return sessionmap.Snapshot{}, false
}

// storeUnavailable is the answer when the task store cannot be read or
// written: retryable (-32603, the task itself may be fine), never the
// -32602 "Task not found" that tells a client to drop the task. The server's
// store wrapper has already replaced infrastructure details by "the
// bridge's task store is unavailable; try again" (and logged them at WARN);
// any other failure (a store that did not answer in time) gets the same
// words, never the store's own.
func storeUnavailable(err error) *rpc.Error {
	if errors.Is(err, sessionmap.ErrStoreLost) {
		// Not retryable: the store was emptied or replaced; its text says
		// so for the client (sessionmap/epoch.go).
		return rpc.Errorf(rpc.CodeInternalError, "%s", err.Error())
	}
	msg := err.Error()
	if !strings.Contains(msg, "try again") {
		msg = "the bridge's task store is unavailable; try again"
	}
	return rpc.Errorf(rpc.CodeInternalError, "internal error: task store: %s", msg)
}

// readRecord reads rec's record for a wait, bounded: a store that froze
// fails the read (retryable, storeUnavailable) instead of holding the wait
// and its client in silence.
func (b *Bridge) readRecord(ctx context.Context, rec sessionmap.Task) (sessionmap.Task, error) {
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	return b.store.GetTask(ctx, rec.Scope, rec.ID)
}

// expiryTimer fires when a record's ttl has run out (createdAt + ttl on
// the bridge's clock; the store judges expiry with its own, so a wait that
// finds the record still there looks again a little later).
type expiryTimer struct{ t *time.Timer }

// expiryRecheck is how long after a premature expiry check the next one
// comes (clocks of the bridge and the store may differ slightly).
const expiryRecheck = time.Second

func newExpiryTimer(rec sessionmap.Task) expiryTimer {
	at, ok := rec.ExpiresAt()
	if !ok || rec.CreatedAt.IsZero() {
		return expiryTimer{}
	}
	return expiryTimer{t: time.NewTimer(max(time.Until(at), 0))}
}

// c is the timer's channel (nil, never ready, for a task without ttl).
func (e expiryTimer) c() <-chan time.Time {
	if e.t == nil {
		return nil
	}
	return e.t.C
}

func (e expiryTimer) rearm() {
	if e.t != nil {
		e.t.Reset(expiryRecheck)
	}
}

func (e expiryTimer) stop() {
	if e.t != nil {
		e.t.Stop()
	}
}
