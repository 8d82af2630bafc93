// Package mcp is a test stub of github.com/mark3labs/mcp-go/mcp v0.47.0:
// legacy tasks API, no extension-side API (no Extensions fields).
package mcp

type MCPMethod string

const MethodTasksResult MCPMethod = "tasks/result"

type TasksCapability struct {
	List *struct{} `json:"list,omitempty"`
}

type ServerCapabilities struct {
	Tasks *TasksCapability `json:"tasks,omitempty"`
}

type TaskResultRequest struct{}

type TaskResultResult struct{}

type RelatedTaskMetaKeyType string

func WithRelatedTask(taskID string) map[string]any { return nil }
