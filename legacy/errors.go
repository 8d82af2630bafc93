package legacy

import (
	"fmt"
	"unicode/utf8"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// The error vocabulary of the 2025-11-25 era (L-38, L-45, L-55, L-56, L-65,
// L-66). Messages
// are one sentence that tells the reader what to do next (L-67). Identifiers a
// peer sent are quoted and cut to a bounded length so an error never echoes an
// arbitrarily large input.

const maxEcho = 128

// quote renders a peer-supplied string for an error message: %q-quoted and
// cut to maxEcho bytes on a rune boundary.
func quote(s string) string {
	if len(s) <= maxEcho {
		return fmt.Sprintf("%q", s)
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", s[:cut])
}

// TaskNotFoundError is the -32602 answer for tasks/get, tasks/result and
// tasks/cancel when the task does not exist, was purged, or belongs to another
// authorization context (L-38, L-45, L-56, L-65, L-69). The text depends only
// on the id the caller sent, so a foreign task is indistinguishable from an
// unknown one (L-38, L-69; docs/ARCHITECTURE.md, A foreign id answers like
// an unknown one).
func TaskNotFoundError(taskID string) *rpc.Error {
	return rpc.Errorf(rpc.CodeInvalidParams,
		"Task not found: no task with taskId %s is available to this client; use the taskId returned by the task-creating request",
		quote(taskID))
}

// TaskExpiredError is the -32602 answer for a task whose ttl has passed
// (L-65). Use it only where TaskNotFoundError would not leak more than the
// caller already knows (the bridge may simply report expired tasks as not found).
func TaskExpiredError(taskID string) *rpc.Error {
	return rpc.Errorf(rpc.CodeInvalidParams,
		"Task has expired: task %s outlived its ttl and its result was deleted; request a longer ttl when creating the task",
		quote(taskID))
}

// InvalidCursorError is the -32602 answer for a tasks/list cursor that is
// malformed or no longer valid (L-51).
func InvalidCursorError(cursor string) *rpc.Error {
	return rpc.Errorf(rpc.CodeInvalidParams,
		"Invalid cursor: %s is not a cursor issued by this server's tasks/list; list again without a cursor",
		quote(cursor))
}

// CancelTerminalError is the -32602 answer for tasks/cancel on a task that is
// already completed, failed or cancelled (L-55). The message names the status
// like the spec example ("Cannot cancel task: already in terminal status 'completed'")
// and says what tasks/result will answer, so the two never disagree: the
// outcome of a completed or failed task (L-41), and for a cancelled one the
// TaskCancelledError (L-41, L-59: a cancelled task has no result).
func CancelTerminalError(taskID string, status TaskStatus) *rpc.Error {
	hint := "fetch its outcome with tasks/result instead"
	if status == StatusCancelled {
		hint = "it has no result (tasks/result answers that it was cancelled); start a new task to run the request again"
	}
	return rpc.WithData(rpc.CodeInvalidParams,
		fmt.Sprintf("Cannot cancel task: already in terminal status '%s'; %s", status, hint),
		map[string]string{"taskId": taskID, "status": string(status)})
}

// ToolTaskForbiddenError is the -32601 answer for a task-augmented tools/call
// on a tool whose execution.taskSupport is absent or "forbidden", when the
// server declares tasks.requests.tools.call (L-07).
func ToolTaskForbiddenError(tool string) *rpc.Error {
	return rpc.Errorf(rpc.CodeMethodNotFound,
		"Tool %s does not support task-augmented execution; call it without the \"task\" parameter",
		quote(tool))
}

// ToolTaskRequiredError is the -32601 answer for a tools/call without "task"
// on a tool with execution.taskSupport "required" (L-08).
func ToolTaskRequiredError(tool string) *rpc.Error {
	return rpc.Errorf(rpc.CodeMethodNotFound,
		"Tool %s requires task augmentation (taskSupport: 'required'); resend the call with a \"task\" parameter, e.g. \"task\": {}",
		quote(tool))
}

// TaskAugmentationRequiredError is the -32600 answer when the receiver's
// policy requires task augmentation for a whole request type (L-06). For tools
// use ToolTaskRequiredError (-32601) instead.
func TaskAugmentationRequiredError(method string) *rpc.Error {
	return rpc.Errorf(rpc.CodeInvalidRequest,
		"Task augmentation required for %s requests; resend with a \"task\" parameter", method)
}

// MethodNotSupportedError is the -32601 answer for a tasks/* method the
// receiver did not declare (tasks/list without tasks.list, tasks/cancel
// without tasks.cancel; L-03: the receiver answers only what it declared).
func MethodNotSupportedError(method string) *rpc.Error {
	return rpc.Errorf(rpc.CodeMethodNotFound,
		"Method not found: %s is not supported by this server (not declared in capabilities.tasks)", quote(method))
}

// TaskCancelledError is the -32603 error tasks/result returns for a cancelled
// task: the work never produced a result, and the spec's recommended answer
// is a JSON-RPC error "Task was cancelled" (L-41). It stays the answer even if
// the work finished after the cancel (L-59); CancelTerminalError for a
// cancelled task points here.
func TaskCancelledError(taskID string) *rpc.Error {
	return rpc.Errorf(rpc.CodeInternalError,
		"Task was cancelled: task %s has no result; start a new task to run the request again", quote(taskID))
}

// InternalError is a -32603 error (L-66) with a formatted message.
func InternalError(format string, a ...any) *rpc.Error {
	return rpc.Errorf(rpc.CodeInternalError, format, a...)
}

// ResourceNotFoundError is the 2025-11-25 -32002 "resource not found" answer to
// resources/read, with data.uri as the spec example shows.
func ResourceNotFoundError(uri string) *rpc.Error {
	return rpc.WithData(rpc.CodeLegacyResourceNotFound,
		fmt.Sprintf("Resource not found: %s; list available resources with resources/list", quote(uri)),
		map[string]string{"uri": uri})
}

// InvalidParamsError is a -32602 error with a formatted message.
func InvalidParamsError(format string, a ...any) *rpc.Error {
	return rpc.Errorf(rpc.CodeInvalidParams, format, a...)
}
