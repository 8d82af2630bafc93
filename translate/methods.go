package translate

import (
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// LegacyTaskID reads params.taskId of a legacy tasks/get, tasks/result or
// tasks/cancel request. params.taskId is the source of truth; any
// related-task _meta in the request is ignored (L-37). A missing, empty or
// non-string taskId is -32602 (L-38, L-45, L-56 for invalid ids; unknown ids
// are the face's lookup).
//
// Implements L-37, L-38, L-45, L-56 (invalid ids).
func LegacyTaskID(method string, params []byte) (string, error) {
	switch method {
	case legacy.MethodTasksGet:
		p, err := legacy.DecodeGetTaskParams(params)
		return p.TaskID, err
	case legacy.MethodTasksResult:
		p, err := legacy.DecodeGetTaskPayloadParams(params)
		return p.TaskID, err
	case legacy.MethodTasksCancel:
		p, err := legacy.DecodeCancelTaskParams(params)
		return p.TaskID, err
	}
	return "", rpc.Errorf(rpc.CodeMethodNotFound, "%s does not take a taskId", method)
}

// CheckModernTaskRequest applies the request-level rules of the tasks
// extension to a modern client's request, before any work:
//   - tasks/result and tasks/list do not exist under 2026-07-28: -32601
//     (M-34, M-42, M-66);
//   - the per-request _meta must carry protocolVersion and
//     clientCapabilities: -32602 otherwise (M-37);
//   - tasks/get, tasks/update and tasks/cancel, and a subscriptions/listen
//     that asks for taskIds, need the tasks extension declared on this very
//     request: -32021 with data.requiredCapabilities otherwise (M-61; never
//     -32003).
//
// It returns the request's decoded _meta.
//
// Implements M-34, M-37, M-42, M-61, M-66.
func CheckModernTaskRequest(method string, params []byte) (modern.RequestMeta, error) {
	if method == modern.MethodTasksResult || method == modern.MethodTasksList {
		return modern.RequestMeta{}, modern.ErrMethodNotFound(method)
	}
	meta, err := modern.DecodeRequestMeta(params)
	if err != nil {
		return modern.RequestMeta{}, err
	}
	if err := meta.Validate(); err != nil {
		return modern.RequestMeta{}, err
	}
	needsTasks := false
	switch method {
	case modern.MethodTasksGet, modern.MethodTasksUpdate, modern.MethodTasksCancel:
		needsTasks = true
	case modern.MethodSubscriptionsListen:
		lp, err := modern.DecodeListenParams(params)
		if err != nil {
			return modern.RequestMeta{}, err
		}
		needsTasks = lp.Notifications.RequestsTasks()
	}
	if needsTasks && !meta.TasksDeclared() {
		return modern.RequestMeta{}, modern.ErrTasksExtensionRequired(method)
	}
	return meta, nil
}
