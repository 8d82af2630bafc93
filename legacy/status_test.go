package legacy

import "testing"

var allStatuses = []TaskStatus{StatusWorking, StatusInputRequired, StatusCompleted, StatusFailed, StatusCancelled}

func TestStatusValidAndTerminal(t *testing.T) {
	terminal := map[TaskStatus]bool{StatusCompleted: true, StatusFailed: true, StatusCancelled: true}
	for _, s := range allStatuses {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
		if s.IsTerminal() != terminal[s] {
			t.Errorf("%s.IsTerminal() = %v", s, s.IsTerminal())
		}
	}
	// SEP-1686 statuses never shipped.
	for _, s := range []TaskStatus{"", "submitted", "unknown", "Working", "canceled"} {
		if s.Valid() || s.IsTerminal() {
			t.Errorf("%q: Valid=%v IsTerminal=%v, want false/false", s, s.Valid(), s.IsTerminal())
		}
	}
}

// TestCanTransitionL25L26 checks the full 5×5 matrix plus invalid statuses.
func TestCanTransitionL25L26(t *testing.T) {
	allowed := map[[2]TaskStatus]bool{}
	for _, from := range []TaskStatus{StatusWorking, StatusInputRequired} {
		for _, to := range allStatuses {
			if from != to {
				allowed[[2]TaskStatus{from, to}] = true // L-25
			}
		}
	}
	for _, from := range allStatuses {
		for _, to := range allStatuses {
			want := allowed[[2]TaskStatus{from, to}]
			if got := CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
			if from.IsTerminal() && CanTransition(from, to) {
				t.Errorf("terminal %s may change to %s (L-26)", from, to)
			}
		}
	}
	if CanTransition(StatusWorking, "submitted") || CanTransition("submitted", StatusWorking) {
		t.Error("transition involving an invalid status allowed")
	}
}
