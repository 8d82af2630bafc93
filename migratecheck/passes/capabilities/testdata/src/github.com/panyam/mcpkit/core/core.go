// Package core is a test stub of github.com/panyam/mcpkit/core.
package core

import "example.com/std/context"

type TaskStatus string

const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
)

type TaskSupport string

const (
	TaskSupportRequired  TaskSupport = "required"
	TaskSupportOptional  TaskSupport = "optional"
	TaskSupportForbidden TaskSupport = "forbidden"
)

// ToolExecution is still used by the v2 (extension) code: not flagged.
type ToolExecution struct {
	TaskSupport TaskSupport `json:"taskSupport"`
}

type TaskInfo struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     string     `json:"createdAt"`
	LastUpdatedAt string     `json:"lastUpdatedAt"`
	TTL           *int       `json:"ttl"`
	PollInterval  int        `json:"pollInterval,omitempty"`
	ParentTaskID  string     `json:"parentTaskId,omitempty"`
}

type TaskInfoV2 struct {
	TaskID         string     `json:"taskId"`
	Status         TaskStatus `json:"status"`
	TTLMs          *int       `json:"ttlMs"`
	PollIntervalMs *int       `json:"pollIntervalMs,omitempty"`
}

type CreateTaskResultV1 struct {
	Task TaskInfo `json:"task"`
}

type GetTaskResultV1 struct {
	Task TaskInfo `json:"task"`
}

type CancelTaskResultV1 struct {
	Task TaskInfo `json:"task"`
}

type ListTasksResultV1 struct {
	Tasks []TaskInfo `json:"tasks"`
}

type CreateTaskResult struct {
	ResultType string `json:"resultType"`
	TaskInfoV2
}

type DetailedTask struct {
	TaskInfoV2
	Result any `json:"result,omitempty"`
}

type TasksCapMethod struct{}

type TasksCapToolsMethods struct {
	Call *TasksCapMethod `json:"call,omitempty"`
}

type TasksCapSamplingMethods struct {
	CreateMessage *TasksCapMethod `json:"createMessage,omitempty"`
}

type TasksCapElicitationMethods struct {
	Create *TasksCapMethod `json:"create,omitempty"`
}

type TasksCapRequests struct {
	Tools       *TasksCapToolsMethods       `json:"tools,omitempty"`
	Sampling    *TasksCapSamplingMethods    `json:"sampling,omitempty"`
	Elicitation *TasksCapElicitationMethods `json:"elicitation,omitempty"`
}

type TasksCap struct {
	List     *TasksCapMethod   `json:"list,omitempty"`
	Cancel   *TasksCapMethod   `json:"cancel,omitempty"`
	Requests *TasksCapRequests `json:"requests,omitempty"`
}

type ClientTasksCap struct {
	Requests *TasksCapRequests `json:"requests,omitempty"`
}

type ServerCapabilities struct {
	Tools      *struct{}      `json:"tools,omitempty"`
	Tasks      *TasksCap      `json:"tasks,omitempty"` // want `^MCP004: ServerCapabilities declares the 2025-11-25 capabilities\.tasks:`
	Extensions map[string]any `json:"extensions,omitempty"`
}

type ClientCapabilities struct {
	Tasks      *ClientTasksCap `json:"tasks,omitempty"`
	Extensions map[string]any  `json:"extensions,omitempty"`
}

const TasksExtensionID = "io.modelcontextprotocol/tasks"

func ClientSupportsTasksV1(ctx context.Context) bool { return false }
func ClientSupportsTasks(ctx context.Context) bool   { return false }
