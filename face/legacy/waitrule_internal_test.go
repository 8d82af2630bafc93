package legacyface

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate/waitrule"
)

// The wait rule, case by case: every route by which a task ends ends the
// wait (L-42, L-58, L-64, M-27), a store that cannot be read is retryable
// and never "Task not found", and input is presented once per key (M-30).
func TestDecideWait(t *testing.T) {
	working := sessionmap.Task{ID: "local", Origin: sessionmap.OriginUpstreamTask, UpstreamTaskID: "up",
		Status: sessionmap.StatusWorking, AnsweredKeys: []string{"k0"}}
	done := working
	done.Status, done.Result = sessionmap.StatusCompleted, []byte(`{"content":[]}`)
	pinned := working
	pinned.Status, pinned.CancelPinned = sessionmap.StatusCancelled, true
	snapOf := func(st modern.TaskStatus, keys ...string) watch.Snapshot {
		d := &modern.DetailedTask{Task: modern.Task{TaskID: "up", Status: st}}
		switch st {
		case modern.StatusCompleted:
			d.Result = []byte(`{"content":[{"type":"text","text":"snap"}]}`)
		case modern.StatusFailed:
			d.Error = &rpc.Error{Code: rpc.CodeInternalError, Message: "boom"}
		case modern.StatusInputRequired:
			d.InputRequests = map[string]modern.InputRequest{}
			for _, k := range keys {
				d.InputRequests[k] = modern.InputRequest{}
			}
		}
		return watch.Snapshot{Task: d}
	}
	gone := snapOf(modern.StatusWorking) // the last good state, then -32602
	gone.Gone = &rpc.Error{Code: rpc.CodeInvalidParams, Message: "Task not found: up"}

	for _, tc := range []struct {
		name    string
		in      waitInput
		kind    waitrule.Kind
		status  sessionmap.Status // waitrule.Answer: the record answered from
		present []string
		lost    bool
		errHas  string
	}{
		{name: "working, no news", in: waitInput{rec: working, snap: snapOf(modern.StatusWorking)}, kind: waitrule.Keep},
		{name: "no snapshot yet", in: waitInput{rec: working}, kind: waitrule.Keep},
		{name: "recorded end", in: waitInput{rec: done, snap: snapOf(modern.StatusWorking)}, kind: waitrule.Answer, status: sessionmap.StatusCompleted},
		{name: "pinned cancel wins over a completion", in: waitInput{rec: pinned, snap: snapOf(modern.StatusCompleted)}, kind: waitrule.Answer, status: sessionmap.StatusCancelled},
		{name: "completion not yet recorded", in: waitInput{rec: working, snap: snapOf(modern.StatusCompleted)}, kind: waitrule.Answer, status: sessionmap.StatusCompleted},
		{name: "failure not yet recorded", in: waitInput{rec: working, snap: snapOf(modern.StatusFailed)}, kind: waitrule.Answer, status: sessionmap.StatusFailed},
		{name: "cancelled upstream", in: waitInput{rec: working, snap: snapOf(modern.StatusCancelled)}, kind: waitrule.Answer, status: sessionmap.StatusCancelled},
		{name: "upstream no longer knows the task", in: waitInput{rec: working, snap: gone, target: "http://up"}, kind: waitrule.Answer, status: sessionmap.StatusFailed},
		{name: "record expired", in: waitInput{recErr: sessionmap.ErrNotFound, snap: snapOf(modern.StatusWorking)}, kind: waitrule.Fail, lost: true},
		{name: "store down", in: waitInput{recErr: errors.New("dial tcp 10.0.0.1:6379: connection refused"), snap: gone}, kind: waitrule.Fail, errHas: "task store is unavailable; try again"},
		{name: "input: unshown keys", in: waitInput{rec: working, snap: snapOf(modern.StatusInputRequired, "k2", "k1", "k0")}, kind: waitrule.Present, present: []string{"k1", "k2"}},
		{name: "input: all shown or answered", in: waitInput{rec: working, snap: snapOf(modern.StatusInputRequired, "k0", "k1"), shown: func(k string) bool { return k == "k1" }}, kind: waitrule.Keep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := decideWait(tc.in)
			if st.Kind != tc.kind {
				t.Fatalf("kind %d, want %d (%+v)", st.Kind, tc.kind, st)
			}
			if tc.kind == waitrule.Answer && st.rec.Status != tc.status {
				t.Errorf("answers from a %s record, want %s", st.rec.Status, tc.status)
			}
			if !slices.Equal(st.Present, tc.present) {
				t.Errorf("presents %v, want %v", st.Present, tc.present)
			}
			if lost := st.End == waitrule.EndLost; lost != tc.lost {
				t.Errorf("lost %v, want %v", st.End == waitrule.EndLost, tc.lost)
			}
			if tc.errHas != "" {
				_, err := st.answer(awaitResult)
				e := rpc.As(err)
				if e == nil || e.Code != rpc.CodeInternalError || !strings.Contains(e.Message, tc.errHas) || strings.Contains(e.Message, "10.0.0.1") {
					t.Errorf("error %v, want a -32603 saying %q without the store's address", err, tc.errHas)
				}
			}
		})
	}
	// The end of a task the upstream no longer knows reads as such, to the
	// waits as to tasks/get (withTerminal): failed, naming the upstream,
	// not the upstream's own task id.
	st := decideWait(waitInput{rec: working, snap: gone, target: "http://up"})
	if _, err := st.answer(awaitResult); err == nil || !strings.Contains(err.Error(), "no longer knows this task") || strings.Contains(err.Error(), "Task not found: up") {
		t.Errorf("tasks/result of a task the upstream lost: %v", err)
	}
}
