// Package mcp is a test stub of github.com/mark3labs/mcp-go/mcp (v1.2.x API
// surface relevant to tasks).
package mcp

import "example.com/std/json"

type MCPMethod string

const (
	MethodToolsCall   MCPMethod = "tools/call"
	MethodTasksGet    MCPMethod = "tasks/get"
	MethodTasksList   MCPMethod = "tasks/list"
	MethodTasksResult MCPMethod = "tasks/result"
	MethodTasksCancel MCPMethod = "tasks/cancel"
)

const MethodNotificationTasksStatus = "notifications/tasks/status"

type Meta struct{ AdditionalFields map[string]any }

type ResultType string

const (
	ResultTypeComplete      ResultType = "complete"
	ResultTypeInputRequired ResultType = "input_required"
)

type Result struct {
	Meta       *Meta      `json:"_meta,omitempty"`
	ResultType ResultType `json:"resultType,omitempty"`
}

type Request struct {
	Method string `json:"method"`
}

type Notification struct {
	Method string `json:"method"`
}

type PaginatedRequest struct {
	Request
	Params struct {
		Cursor string `json:"cursor,omitempty"`
	} `json:"params,omitempty"`
}

type PaginatedResult struct {
	Result
	NextCursor string `json:"nextCursor,omitempty"`
}

type Content interface{}

func IsModernProtocol(v string) bool { return v >= "2026-07-28" }

type MissingRequiredClientCapabilityError struct{ Capability string }

func (e MissingRequiredClientCapabilityError) Error() string { return "missing " + e.Capability }

type TasksCapability struct {
	List     *struct{}               `json:"list,omitempty"`
	Cancel   *struct{}               `json:"cancel,omitempty"`
	Requests *TaskRequestsCapability `json:"requests,omitempty"`
}

type TaskRequestsCapability struct {
	Tools *struct {
		Call *struct{} `json:"call,omitempty"`
	} `json:"tools,omitempty"`
	Sampling *struct {
		CreateMessage *struct{} `json:"createMessage,omitempty"`
	} `json:"sampling,omitempty"`
	Elicitation *struct {
		Create *struct{} `json:"create,omitempty"`
	} `json:"elicitation,omitempty"`
}

type ClientCapabilities struct {
	Extensions   map[string]any   `json:"extensions,omitempty"`
	Experimental map[string]any   `json:"experimental,omitempty"`
	Tasks        *TasksCapability `json:"tasks,omitempty"`
}

type ServerCapabilities struct {
	Extensions   map[string]any   `json:"extensions,omitempty"`
	Experimental map[string]any   `json:"experimental,omitempty"`
	Logging      *struct{}        `json:"logging,omitempty"`
	Tasks        *TasksCapability `json:"tasks,omitempty"`
}

type TaskStatus string

const (
	TaskStatusWorking       TaskStatus = "working"
	TaskStatusInputRequired TaskStatus = "input_required"
	TaskStatusCompleted     TaskStatus = "completed"
	TaskStatusFailed        TaskStatus = "failed"
	TaskStatusCancelled     TaskStatus = "cancelled"
)

func (s TaskStatus) IsTerminal() bool {
	return s == TaskStatusCompleted || s == TaskStatusFailed || s == TaskStatusCancelled
}

type Task struct {
	TaskId        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     string     `json:"createdAt"`
	LastUpdatedAt string     `json:"lastUpdatedAt"`
	TTL           *int64     `json:"ttl"`
	PollInterval  *int64     `json:"pollInterval,omitempty"`
}

func (t Task) GetName() string { return t.TaskId }

type TaskParams struct {
	TTL *int64 `json:"ttl,omitempty"`
}

type CreateTaskResult struct {
	Result
	Task              Task      `json:"task"`
	Content           []Content `json:"-"`
	StructuredContent any       `json:"-"`
	IsError           bool      `json:"-"`
}

type GetTaskRequest struct {
	Request
	Params GetTaskParams `json:"params"`
}

type GetTaskParams struct {
	TaskId string `json:"taskId"`
}

type GetTaskResult struct {
	Result
	Task
}

type ListTasksRequest struct {
	PaginatedRequest
}

type ListTasksResult struct {
	PaginatedResult
	Tasks []Task `json:"tasks"`
}

type TaskResultRequest struct {
	Request
	Params TaskResultParams `json:"params"`
}

type TaskResultParams struct {
	TaskId string `json:"taskId"`
}

type TaskResultResult struct {
	Result
	Content []Content `json:"content,omitempty"`
	IsError bool      `json:"isError,omitempty"`
}

type CancelTaskRequest struct {
	Request
	Params CancelTaskParams `json:"params"`
}

type CancelTaskParams struct {
	TaskId string `json:"taskId"`
}

type CancelTaskResult struct {
	Result
	Task
}

type TaskStatusNotification struct {
	Notification
	Params TaskStatusNotificationParams `json:"params"`
}

type TaskStatusNotificationParams struct {
	Task
}

type TaskOption func(*Task)

func NewTask(taskId string, opts ...TaskOption) Task {
	t := Task{TaskId: taskId, Status: TaskStatusWorking}
	for _, o := range opts {
		o(&t)
	}
	return t
}

func WithTaskStatus(status TaskStatus) TaskOption { return func(t *Task) { t.Status = status } }
func WithTaskStatusMessage(message string) TaskOption {
	return func(t *Task) { t.StatusMessage = message }
}
func WithTaskTTL(ttlMs int64) TaskOption { return func(t *Task) { t.TTL = &ttlMs } }
func WithTaskPollInterval(intervalMs int64) TaskOption {
	return func(t *Task) { t.PollInterval = &intervalMs }
}
func WithTaskCreatedAt(createdAt string) TaskOption { return func(t *Task) { t.CreatedAt = createdAt } }

func NewTaskParams(ttlMs *int64) TaskParams           { return TaskParams{TTL: ttlMs} }
func NewCreateTaskResult(task Task) CreateTaskResult  { return CreateTaskResult{Task: task} }
func NewGetTaskResult(task Task) GetTaskResult        { return GetTaskResult{Task: task} }
func NewListTasksResult(tasks []Task) ListTasksResult { return ListTasksResult{Tasks: tasks} }
func NewCancelTaskResult(task Task) CancelTaskResult  { return CancelTaskResult{Task: task} }
func NewTaskStatusNotification(task Task) TaskStatusNotification {
	return TaskStatusNotification{Params: TaskStatusNotificationParams{Task: task}}
}

func NewTasksCapability() *TasksCapability              { return &TasksCapability{List: &struct{}{}} }
func NewTasksCapabilityWithToolsOnly() *TasksCapability { return &TasksCapability{} }

const RelatedTaskMetaKey = "io.modelcontextprotocol/related-task"

func RelatedTaskMeta(taskID string) map[string]any { return map[string]any{"taskId": taskID} }
func WithRelatedTask(taskID string) *Meta {
	return &Meta{AdditionalFields: map[string]any{RelatedTaskMetaKey: RelatedTaskMeta(taskID)}}
}

const ModelImmediateResponseMetaKey = "io.modelcontextprotocol/model-immediate-response"

func WithModelImmediateResponse(message string) *Meta {
	return &Meta{AdditionalFields: map[string]any{ModelImmediateResponseMetaKey: message}}
}

func ParseCancelTaskResult(raw *json.RawMessage) (*CancelTaskResult, error) { return nil, nil }
func ParseListTasksResult(raw *json.RawMessage) (*ListTasksResult, error)   { return nil, nil }
func ParseTaskResultResult(raw *json.RawMessage) (*TaskResultResult, error) { return nil, nil }
func ParseGetTaskResult(raw *json.RawMessage) (*GetTaskResult, error)       { return nil, nil }

type TaskSupport string

const (
	TaskSupportForbidden TaskSupport = "forbidden"
	TaskSupportOptional  TaskSupport = "optional"
	TaskSupportRequired  TaskSupport = "required"
)

type ToolExecution struct {
	TaskSupport TaskSupport `json:"taskSupport,omitempty"`
}

type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Execution   *ToolExecution `json:"execution,omitempty"`
}

type ToolOption func(*Tool)

func NewTool(name string, opts ...ToolOption) Tool {
	t := Tool{Name: name}
	for _, o := range opts {
		o(&t)
	}
	return t
}

func WithDescription(d string) ToolOption { return func(t *Tool) { t.Description = d } }

func WithTaskSupport(support TaskSupport) ToolOption {
	return func(t *Tool) { t.Execution = &ToolExecution{TaskSupport: support} }
}

type CallToolParams struct {
	Name      string      `json:"name"`
	Arguments any         `json:"arguments,omitempty"`
	Meta      *Meta       `json:"_meta,omitempty"`
	Task      *TaskParams `json:"task,omitempty"`
}

type CallToolRequest struct {
	Request
	Params CallToolParams `json:"params"`
}

type CallToolResult struct {
	Result
	Content []Content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
}
