// Package mcp is a test stub of github.com/theory-cloud/apptheory/v3/runtime/mcp.
package mcp

import "example.com/std/time"

const (
	methodTasksResult      = "tasks/result"
	methodTasksList        = "tasks/list"
	relatedTaskMetadataKey = "io.modelcontextprotocol/related-task"
)

type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  *int64 `json:"pollInterval,omitempty"`
}

type TaskMetadata struct {
	TTL int64 `json:"ttl,omitempty"`
}

type CreateTaskResult struct {
	Task Task `json:"task"` // want `^MCP008: CreateTaskResult nests a task-shaped value under json "task"`
}

type ToolExecution struct {
	TaskSupport string `json:"taskSupport,omitempty"`
}

type TaskStore interface {
	Get(id string) (*Task, error)
}

func NewDynamoTaskStore(table string) TaskStore { return nil }
func NewMemoryTaskStore() TaskStore             { return nil }

type TaskRuntimeOptions struct {
	Store                  TaskStore
	DefaultTTL             time.Duration
	MaxTTL                 time.Duration
	PollInterval           time.Duration
	ListLimit              int
	ModelImmediateResponse string
}

type ServerOption func()

func WithTaskRuntime(o TaskRuntimeOptions) ServerOption { return nil }

type TaskListRequest struct{ Cursor string }
type TaskListResult struct{ Tasks []Task }

type CapabilityConfig struct {
	Tools bool
	Tasks bool
}
