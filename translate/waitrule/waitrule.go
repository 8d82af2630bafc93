// Package waitrule is the one rule every wait on an upstream task follows
// on the legacy face (a blocking tasks/result, a parked one, a plain
// tools/call the bridge waits on internally): given the stored record as
// just read, the watcher's latest snapshot of the upstream task, what the
// waiting session was already shown and the wait's mode, a wait answers,
// fails, presents input keys or keeps waiting.
//
// A task is over for its waits as soon as it is terminal by any route,
// whichever comes first:
//
//   - the record says so (a completion recorded by the watcher, by another
//     replica or before a restart; a cancel pinned, L-58);
//   - the snapshot says so, pushed (notifications/tasks, M-33) or polled
//     (M-24): the watchers hand a terminal snapshot to waiters before the
//     durable write, and the watcher ends with it, so a wait that kept
//     waiting for the write would wait for ever once the write is late,
//     lost or refused;
//   - the upstream no longer knows the task (-32602 from tasks/get after it
//     restarted empty or purged it, M-27): failed, saying so;
//   - the record expired (createdAt + ttl, L-64, L-65): the task is gone.
//
// A store that cannot be read is none of these: the task may well be alive,
// so the wait fails with the retryable "task store unavailable", never with
// "Task not found" (which tells a client to forget the task).
//
// The mode does not change whether a wait ends, only what it answers
// (Step.Reply): a tasks/result answers with the task's result and its
// related-task _meta or the task's error (L-43, L-44), a plain tools/call,
// whose client never saw a task id, with the plain result or an error that
// names no task.
//
// Pure: no I/O. The caller reads the store and the watcher, adapts what it
// read to Record and Snapshot, and acts on the Step.
package waitrule

import (
	"slices"
	"sort"

	"github.com/tasksbridge/tasksbridge/modern"
)

// Record is the stored record of the task as the rule sees it.
type Record struct {
	// Missing: the store no longer has the record (it expired, L-64, L-65).
	Missing bool `json:"missing,omitempty"`
	// Unreadable: the store could not be read (down, frozen, lost).
	Unreadable bool `json:"unreadable,omitempty"`
	// Status is the recorded status (the five of both eras share spelling).
	Status modern.TaskStatus `json:"status,omitempty"`
	// Follows: the record follows an upstream task (it has the upstream's
	// task id); a record that does not cannot change any more.
	Follows bool `json:"follows,omitempty"`
	// CancelPinned: a client's tasks/cancel pinned it cancelled (L-58).
	CancelPinned bool `json:"cancelPinned,omitempty"`
	// HasResult: the record holds the task's result.
	HasResult bool `json:"hasResult,omitempty"`
	// Answered lists, sorted, the input keys whose answers the store holds.
	Answered []string `json:"answered,omitempty"`
}

// Snapshot is the watcher's latest snapshot of the upstream task as the
// rule sees it (the zero Snapshot: none yet, or none that matters).
type Snapshot struct {
	// Gone: the upstream answered tasks/get with -32602, it no longer knows
	// the task (M-27).
	Gone bool `json:"gone,omitempty"`
	// Status is the upstream's status ("" when unknown).
	Status modern.TaskStatus `json:"status,omitempty"`
	// HasResult: the snapshot carries the task's result.
	HasResult bool `json:"hasResult,omitempty"`
	// InputKeys are the keys of the upstream's inputRequests (M-30).
	InputKeys []string `json:"inputKeys,omitempty"`
}

// Input is what the rule decides from.
type Input struct {
	// Record is the record as read after Snapshot arrived, so a cancel
	// pinned meanwhile is seen.
	Record   Record
	Snapshot Snapshot
	// Shown reports whether the waiting session was already shown input
	// key k, or this process already answered it (nil: neither).
	Shown func(k string) bool
}

// Kind is what a wait does next.
type Kind int

const (
	Keep    Kind = iota // nothing new: keep waiting
	Answer              // the task is over: answer Step.Reply(mode)
	Fail                // the wait cannot go on: answer Step.Reply(mode)
	Present             // present Step.Present to the client, keep waiting
)

// End is how the task ended for its waits, or why a wait fails.
type End int

const (
	EndNone        End = iota // Keep, Present
	EndCompleted              // completed with a result
	EndFailed                 // failed (also: the upstream no longer knows it)
	EndCancelled              // cancelled upstream, or a cancel pinned (L-58)
	EndNoResult               // completed without a result: an upstream fault
	EndNotTerminal            // a record that follows no upstream task and is not terminal
	EndBadStatus              // a record whose status is none of the five
	EndLost                   // the record expired (L-64, L-65)
	EndStoreDown              // the store could not be read: retryable
)

// From names what the answer is built from.
type From int

const (
	FromRecord   From = iota // the record as read
	FromSnapshot             // the record ended by the terminal snapshot, as the store will record it
	FromGone                 // the record failed because the upstream no longer knows the task
)

// Step is the rule's decision.
type Step struct {
	Kind    Kind
	End     End
	From    From
	Present []string // Present: the keys to show, sorted
}

// Reply is what a wait that ends answers, by the wait's mode.
type Reply int

const (
	ReplyNone             Reply = iota // the wait goes on
	ReplyPayload                       // tasks/result: the result with related-task _meta (L-34, L-43)
	ReplyPlainResult                   // plain tools/call: the plain result
	ReplyTaskError                     // the task's error, translated (L-44)
	ReplyCancelled                     // tasks/result: the legacy "Task was cancelled" error (L-58)
	ReplyCancelledPlain                // plain tools/call: the work was cancelled, naming no task
	ReplyNoResult                      // internal error: completed upstream without a result
	ReplyNotTerminal                   // internal error: the task is not terminal
	ReplyBadStatus                     // internal error: unknown status
	ReplyNotFound                      // tasks/result: -32602 for the task id (L-65)
	ReplyLostPlain                     // plain tools/call: not finished within its task's ttl
	ReplyStoreUnavailable              // retryable: the task store is unavailable
)

// Mode is what kind of wait it is.
type Mode int

const (
	ModeResult Mode = iota // tasks/result, blocking or parked
	ModePlain              // a plain tools/call the bridge made a task of and waits on internally
)

// Decide is the rule (see the package comment).
func Decide(in Input) Step {
	rec, snap := in.Record, in.Snapshot
	switch {
	case rec.Missing:
		return Step{Kind: Fail, End: EndLost}
	case rec.Unreadable:
		return Step{Kind: Fail, End: EndStoreDown}
	}
	if !rec.Live() {
		return Step{Kind: Answer, End: endOf(rec.Status, rec.CancelPinned, rec.HasResult), From: FromRecord}
	}
	if snap.Gone {
		return Step{Kind: Answer, End: endOf(modern.StatusFailed, rec.CancelPinned, false), From: FromGone}
	}
	if terminal(snap.Status) {
		return Step{Kind: Answer, End: endOf(snap.Status, rec.CancelPinned, snap.HasResult), From: FromSnapshot}
	}
	if snap.Status != modern.StatusInputRequired {
		return Step{Kind: Keep}
	}
	var keys []string
	for _, k := range snap.InputKeys {
		if _, answered := slices.BinarySearch(rec.Answered, k); answered || (in.Shown != nil && in.Shown(k)) {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return Step{Kind: Keep}
	}
	sort.Strings(keys)
	return Step{Kind: Present, Present: keys}
}

// Reply is what a wait of mode m answers on s.
func (s Step) Reply(m Mode) Reply {
	switch s.End {
	case EndCompleted:
		if m == ModePlain {
			return ReplyPlainResult
		}
		return ReplyPayload
	case EndFailed:
		return ReplyTaskError
	case EndCancelled:
		if m == ModePlain {
			return ReplyCancelledPlain
		}
		return ReplyCancelled
	case EndNoResult:
		return ReplyNoResult
	case EndNotTerminal:
		return ReplyNotTerminal
	case EndBadStatus:
		return ReplyBadStatus
	case EndLost:
		if m == ModePlain {
			return ReplyLostPlain
		}
		return ReplyNotFound
	case EndStoreDown:
		return ReplyStoreUnavailable
	}
	return ReplyNone
}

// Live reports whether the record still follows a running upstream task:
// only then can a wait on it go on.
func (r Record) Live() bool { return r.Follows && !terminal(r.Status) }

func terminal(s modern.TaskStatus) bool {
	return s == modern.StatusCompleted || s == modern.StatusFailed || s == modern.StatusCancelled
}

// endOf is how a task with status st ends: a pinned cancel wins over
// whatever the upstream did (L-58); a completion needs its result.
func endOf(st modern.TaskStatus, pinned, hasResult bool) End {
	switch {
	case !st.Valid():
		return EndBadStatus
	case pinned || st == modern.StatusCancelled:
		return EndCancelled
	case st == modern.StatusCompleted && hasResult:
		return EndCompleted
	case st == modern.StatusCompleted:
		return EndNoResult
	case st == modern.StatusFailed:
		return EndFailed
	}
	return EndNotTerminal
}
