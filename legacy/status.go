package legacy

// TaskStatus is the state of a legacy task. The 2025-11-25 schema knows exactly
// five values; there is no "submitted" or "unknown" (those are SEP-1686 only).
type TaskStatus string

// The five task statuses.
const (
	StatusWorking       TaskStatus = "working"
	StatusInputRequired TaskStatus = "input_required"
	StatusCompleted     TaskStatus = "completed"
	StatusFailed        TaskStatus = "failed"
	StatusCancelled     TaskStatus = "cancelled"
)

// Valid reports whether s is one of the five statuses of the schema.
func (s TaskStatus) Valid() bool {
	switch s {
	case StatusWorking, StatusInputRequired, StatusCompleted, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// IsTerminal reports whether s is completed, failed or cancelled: a task in a
// terminal status never changes status again (L-26).
func (s TaskStatus) IsTerminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// CanTransition reports whether a task may change status from from to to
// (L-25, L-26): working → {input_required, completed, failed, cancelled},
// input_required → {working, completed, failed, cancelled}, and nothing out of
// a terminal status. Staying in the same status is not a transition and
// reports false; a caller that only updates statusMessage need not ask.
// Callers drop refused transitions silently (a late completion after cancel is
// not a protocol error: L-26, L-59).
func CanTransition(from, to TaskStatus) bool {
	if !from.Valid() || !to.Valid() || from == to {
		return false
	}
	switch from {
	case StatusWorking, StatusInputRequired:
		return true
	}
	return false
}
