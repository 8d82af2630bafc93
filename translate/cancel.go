package translate

import (
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// CancelAction is what the legacy face does with a legacy tasks/cancel.
type CancelAction int

const (
	// CancelReject answers with Decision.Error (-32602) and changes nothing.
	CancelReject CancelAction = iota + 1
	// CancelPin persists Decision.Task (status cancelled) as pinned, then
	// sends tasks/cancel upstream when ForwardUpstream, then replies with
	// Decision.Task. Later upstream states never un-cancel it (MergeStatus).
	CancelPin
)

func (a CancelAction) String() string {
	switch a {
	case CancelReject:
		return "reject"
	case CancelPin:
		return "pin"
	}
	return "invalid"
}

// CancelledStatusMessage is the statusMessage of a task the bridge pinned
// cancelled (the spec example's wording).
const CancelledStatusMessage = "The task was cancelled by request."

// CancelDecision is the explicit "pinned cancelled" decision for a legacy
// tasks/cancel in front of a modern upstream, whose own tasks/cancel is only a
// cooperative acknowledgement (L-58, L-59 against M-59).
type CancelDecision struct {
	Action CancelAction
	// Error is the reply for CancelReject.
	Error *rpc.Error
	// Task is the legacy Task to store (pinned) and to reply with for
	// CancelPin: status cancelled, lastUpdatedAt = now.
	Task legacy.Task
	// ForwardUpstream says to send tasks/cancel {taskId: UpstreamTaskID}
	// upstream, after the pin is durable (L-57: try to stop the work).
	ForwardUpstream bool
}

// DecideLegacyCancel decides a legacy tasks/cancel for the task the bridge
// holds as local (its current legacy view, already merged):
//   - terminal (completed, failed, cancelled) → reject with -32602
//     "Cannot cancel task: already in terminal status '<status>'" (L-55);
//   - otherwise pin: the reply is the Task moved to cancelled before the reply
//     (L-58), and the upstream is asked to stop (L-57); the pin then makes the
//     state stick whatever the upstream does (L-59).
//
// Implements L-55, L-57, L-58, L-59, L-67.
func DecideLegacyCancel(local legacy.Task, clock Clock) CancelDecision {
	if local.Status.IsTerminal() || !local.Status.Valid() {
		return CancelDecision{Action: CancelReject, Error: legacy.CancelTerminalError(local.TaskID, local.Status)}
	}
	t := local
	t.Status = legacy.StatusCancelled
	t.StatusMessage = CancelledStatusMessage
	t.LastUpdatedAt = legacy.FormatTime(clock.Now())
	return CancelDecision{Action: CancelPin, Task: t, ForwardUpstream: true}
}

// ModernCancelReply turns the legacy upstream's answer to a forwarded
// tasks/cancel (a whole JSON-RPC response) into the reply to the modern
// client's tasks/cancel:
//   - a success (the legacy Task, cancelled) → the empty acknowledgement
//     {"resultType":"complete"} (M-59);
//   - -32602 for a task the bridge knows (taskKnown: the legacy upstream
//     refuses to cancel a terminal task) → the acknowledgement as well:
//     modern cancellation is cooperative and the task simply ends as it ended;
//   - -32602 for a task the bridge does not know → -32602 task not found (M-60);
//   - -32601 (the upstream does not declare tasks.cancel) → the
//     acknowledgement: the server is not obliged to stop the work (M-59);
//   - any other error → that error mapped by ErrorToModern.
//
// Implements M-59, M-60.
func ModernCancelReply(response []byte, taskKnown bool, taskID string) (modern.CancelTaskResult, error) {
	resp, err := legacy.DecodeResponse(response)
	if err != nil {
		return modern.CancelTaskResult{}, upstreamErr("tasks/cancel response", err)
	}
	if resp.Error == nil {
		return modern.CancelTaskResult{}, nil
	}
	switch resp.Error.Code {
	case rpc.CodeInvalidParams:
		if taskKnown {
			return modern.CancelTaskResult{}, nil
		}
		return modern.CancelTaskResult{}, modern.ErrTaskNotFound(taskID)
	case rpc.CodeMethodNotFound:
		return modern.CancelTaskResult{}, nil
	}
	return modern.CancelTaskResult{}, ErrorToModern(legacy.MethodTasksCancel, resp.Error)
}
