package translate

import (
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
)

// Status is the status string both eras share ("working", "input_required",
// "completed", "failed", "cancelled"); legacy.TaskStatus and
// modern.TaskStatus both satisfy it.
type Status interface {
	~string
}

// MergeStatus decides the status the bridge records when an upstream reports
// upstream for a task the bridge holds at local. It is monotonic:
//   - a terminal local status sticks (L-26): a late completion after a
//     cancel, or a flip between terminal states, is dropped silently
//     (not a protocol error);
//   - otherwise a pinned cancel wins over anything the upstream says (L-59;
//     the legacy task moved to cancelled before the cancel reply, L-58; a pin
//     is only ever set on a non-terminal task, so the two rules agree);
//   - a non-terminal local status follows the upstream, including
//     working ↔ input_required (L-25, L-27, L-28);
//   - an unknown upstream status is ignored.
//
// Implements L-25, L-26, L-28, L-59.
func MergeStatus[S Status](local, upstream S, pinnedCancelled bool) S {
	switch {
	case isTerminal(string(local)):
		return local
	case pinnedCancelled:
		return S(legacy.StatusCancelled)
	case !legacy.TaskStatus(upstream).Valid():
		return local
	}
	return upstream
}

func isTerminal(s string) bool { return legacy.TaskStatus(s).IsTerminal() }

// MergeLegacyTask merges a fresh upstream view (next, already translated by
// LegacyTaskFromDetailed) into the legacy Task the bridge holds (local),
// following MergeStatus:
//   - a terminal local task is kept whole (status, statusMessage,
//     lastUpdatedAt: a cancelled task reports when it was cancelled);
//   - pinned but not yet cancelled locally (DecideLegacyCancel's Task was
//     not stored): cancelled now, with lastUpdatedAt moved to the later of the
//     two views — the status changed, so lastUpdatedAt must not stay behind;
//   - otherwise next is taken, except that the id the client knows and
//     createdAt stay the local ones (a task is created once; an upstream that
//     spells or reports it differently must not move it), and lastUpdatedAt
//     never goes back in time.
//
// changed reports whether the result differs from local, i.e. whether a
// status notification is due (L-61).
//
// Implements L-18, L-19, L-25, L-26, L-59 (sessionmap's monotonic update uses
// the same rule).
func MergeLegacyTask(local, next legacy.Task, pinnedCancelled bool) (merged legacy.Task, changed bool) {
	if local.Status.IsTerminal() {
		return local, false
	}
	if pinnedCancelled { // pinned but local not yet cancelled: DecideLegacyCancel's Task was not stored
		local.Status = legacy.StatusCancelled
		local.StatusMessage = CancelledStatusMessage
		local.LastUpdatedAt = laterTime(local.LastUpdatedAt, next.LastUpdatedAt)
		return local, true
	}
	if !next.Status.Valid() {
		return local, false
	}
	merged = next
	merged.TaskID = local.TaskID // the id the client knows may be a local alias
	if local.CreatedAt != "" {
		merged.CreatedAt = local.CreatedAt
	}
	merged.LastUpdatedAt = laterTime(local.LastUpdatedAt, merged.LastUpdatedAt)
	return merged, !sameTask(merged, local)
}

// laterTime returns the later of two timestamps, a when they tie or b cannot
// be read, b when a cannot be read (or is empty).
func laterTime(a, b string) string {
	ta, errA := legacy.ParseTime(a)
	tb, errB := legacy.ParseTime(b)
	switch {
	case errB != nil:
		return a
	case errA != nil || tb.After(ta):
		return b
	}
	return a
}

func sameTask(a, b legacy.Task) bool {
	eq := func(x, y *int64) bool { return (x == nil && y == nil) || (x != nil && y != nil && *x == *y) }
	return a.TaskID == b.TaskID && a.Status == b.Status && a.StatusMessage == b.StatusMessage &&
		a.CreatedAt == b.CreatedAt && a.LastUpdatedAt == b.LastUpdatedAt && eq(a.TTL, b.TTL) && eq(a.PollInterval, b.PollInterval)
}

// MergeModernStatus is MergeStatus for the modern face's view of a task on a
// legacy upstream (terminal sticks; there is no pin in that direction, a modern
// cancel is only an acknowledgement, M-59).
//
// Implements M-55 (the reported variant never regresses from terminal).
func MergeModernStatus(local, upstream modern.TaskStatus) modern.TaskStatus {
	return MergeStatus(local, upstream, false)
}
