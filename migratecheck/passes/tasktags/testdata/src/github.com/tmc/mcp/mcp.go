// Package mcp is a test stub of github.com/tmc/mcp.
package mcp

const (
	MethodTasksGet    = "tasks/get"
	MethodTasksList   = "tasks/list"
	MethodTasksResult = "tasks/result"
	MethodTasksCancel = "tasks/cancel"
	MethodTasksStatus = "notifications/tasks/status"
)

type TaskInfo struct {
	TaskID       string `json:"taskId"`
	Status       string `json:"status"`
	TTL          *int64 `json:"ttl,omitempty"`          // want `^MCP006: json tag "ttl" in task-shaped struct TaskInfo is the legacy Task`
	PollInterval *int64 `json:"pollInterval,omitempty"` // want `^MCP007: json tag "pollInterval" in task-shaped struct TaskInfo is the`
}

type GetTaskRequest struct{ TaskID string }
type CancelTaskRequest struct{ TaskID string }
type ListTasksRequest struct{ Cursor string }
type ListTasksResult struct{ Tasks []TaskInfo }

type ClientCapabilities struct {
	Tasks *struct {
		List *struct{} `json:"list,omitempty"`
	} `json:"tasks,omitempty"`
}

type ServerCapabilities struct {
	Tasks *struct {
		List *struct{} `json:"list,omitempty"`
	} `json:"tasks,omitempty"`
}
