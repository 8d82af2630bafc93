package legacyface

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
	"github.com/tasksbridge/tasksbridge/translate/waitrule"
)

// The wait rule itself lives in translate/waitrule (pure); this file is the
// one place that adapts what a wait read (the record, the watcher's
// snapshot) to it and turns its step into an answer.

// awaitMode is what a wait answers: waitrule.ModeResult for tasks/result
// (the result + related-task _meta), waitrule.ModePlain for a tools/call
// the bridge waits on internally (the plain result).
type awaitMode = waitrule.Mode

const (
	awaitResult = waitrule.ModeResult
	awaitPlain  = waitrule.ModePlain
)

// waitInput is what a wait read.
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

// waitStep is the rule's decision with what the answer is built from.
type waitStep struct {
	waitrule.Step
	rec sessionmap.Task // Answer: the terminal record to answer from; otherwise the record as read
	err error           // EndStoreDown: the store's error
}

// ends reports whether the step ends the wait.
func (st waitStep) ends() bool { return st.Kind == waitrule.Answer || st.Kind == waitrule.Fail }

// decideWait applies the wait rule to what a wait read.
func decideWait(in waitInput) waitStep {
	st := waitStep{
		Step: waitrule.Decide(waitrule.Input{Record: recordView(in.rec, in.recErr), Snapshot: snapshotView(in.snap), Shown: in.shown}),
		rec:  in.rec,
		err:  in.recErr,
	}
	switch st.From {
	case waitrule.FromSnapshot, waitrule.FromGone:
		if sn, ok := terminalSnapshotOf(in.target, in.snap); ok {
			st.rec = mergeTerminal(in.rec, sn)
		}
	}
	return st
}

// answerOf is the answer to a wait on a record that no longer follows a
// running upstream task (terminal, pinned, or never an upstream task).
func answerOf(rec sessionmap.Task, mode awaitMode) (mcp.Result, error) {
	return decideWait(waitInput{rec: rec}).answer(mode)
}

// recordView is rec (read with err) as the wait rule sees it.
func recordView(rec sessionmap.Task, err error) waitrule.Record {
	switch {
	case errors.Is(err, sessionmap.ErrNotFound):
		return waitrule.Record{Missing: true}
	case err != nil:
		return waitrule.Record{Unreadable: true}
	}
	return waitrule.Record{
		Status:       modern.TaskStatus(rec.Status),
		Follows:      rec.Origin == sessionmap.OriginUpstreamTask && rec.UpstreamTaskID != "",
		CancelPinned: rec.CancelPinned,
		HasResult:    len(rec.Result) > 0,
		Answered:     rec.AnsweredKeys,
	}
}

// snapshotView is snap as the wait rule sees it. A terminal state the
// record could not take (snapshotOf refuses it) is no news.
func snapshotView(snap watch.Snapshot) waitrule.Snapshot {
	if snap.Gone != nil {
		return waitrule.Snapshot{Gone: true}
	}
	d := snap.Task
	if d == nil {
		return waitrule.Snapshot{}
	}
	v := waitrule.Snapshot{Status: d.Status, HasResult: len(d.Result) > 0}
	if sessionmap.Status(d.Status).Terminal() {
		if _, err := snapshotOf(d); err != nil {
			return waitrule.Snapshot{}
		}
	}
	for k := range d.InputRequests {
		v.InputKeys = append(v.InputKeys, k)
	}
	return v
}

// answer is what a wait of mode m answers on a step that ends it, built
// from st.rec as the rule says (it decides nothing itself).
func (st waitStep) answer(m awaitMode) (mcp.Result, error) {
	rec := st.rec
	switch st.Reply(m) {
	case waitrule.ReplyPayload:
		r, err := translate.PayloadToLegacy(rec.Result, rec.ID)
		if err != nil {
			return nil, err
		}
		return payload(r)
	case waitrule.ReplyPlainResult:
		if _, err := translate.PayloadToLegacy(rec.Result, rec.ID); err != nil {
			return nil, err // the same refusal as tasks/result's
		}
		plain, err := legacyResult(rec.Result)
		if err != nil {
			return nil, err
		}
		return newRaw(plain)
	case waitrule.ReplyTaskError:
		e := detailedOf(rec).Error
		if e == nil {
			e = rpc.Errorf(rpc.CodeInternalError, "task %s failed upstream without a JSON-RPC error", rec.ID)
		}
		return nil, translate.ErrorToLegacy(legacy.MethodToolsCall, true, e)
	case waitrule.ReplyCancelled:
		return nil, legacy.TaskCancelledError(rec.ID)
	case waitrule.ReplyCancelledPlain:
		// The client of a plain call never saw the task id.
		return nil, rpc.Errorf(rpc.CodeInternalError, "the upstream work for this tools/call was cancelled before it finished")
	case waitrule.ReplyNoResult:
		return nil, rpc.Errorf(rpc.CodeInternalError, "task %s completed upstream without a result", rec.ID)
	case waitrule.ReplyBadStatus:
		return nil, rpc.Errorf(rpc.CodeInternalError, "task %s has unknown status %q", rec.ID, rec.Status)
	case waitrule.ReplyNotFound, waitrule.ReplyLostPlain:
		return nil, lostTask(rec, m)
	case waitrule.ReplyStoreUnavailable:
		return nil, storeUnavailable(st.err)
	}
	return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: the task is not terminal")
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
