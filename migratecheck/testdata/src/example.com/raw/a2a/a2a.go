// Package a2a mimics the A2A Go SDK, whose names overlap with MCP tasks
// (ListTasks, GetTask, CancelTask, MethodTasksList). Nothing here is MCP:
// no finding is expected.
package a2a

import "example.com/std/context"

const (
	MethodTasksGet    = "GetTask"
	MethodTasksList   = "ListTasks"
	MethodTasksCancel = "CancelTask"
	MethodTasksSend   = "tasks/send"
)

type TaskStatus struct {
	State     string `json:"state"`
	Timestamp string `json:"timestamp,omitempty"`
}

// Task is A2A's task: id/contextId, not taskId.
type Task struct {
	ID        string     `json:"id"`
	ContextID string     `json:"contextId"`
	Status    TaskStatus `json:"status"`
	Kind      string     `json:"kind"`
}

type Message struct {
	Task *Task  `json:"task,omitempty"`
	Text string `json:"text"`
}

type ListTasksRequest struct {
	PageSize     int    `json:"pageSize,omitempty"`
	PollInterval string `json:"pollInterval,omitempty"`
}

type Client struct{}

func (c *Client) Call(ctx context.Context, method string, params any) error { return nil }
func (c *Client) ListTasks(ctx context.Context, r ListTasksRequest) ([]Task, error) {
	return nil, c.Call(ctx, MethodTasksList, r)
}
func (c *Client) GetTask(ctx context.Context, id string) (*Task, error) {
	return nil, c.Call(ctx, MethodTasksGet, map[string]any{"id": id})
}
func (c *Client) CancelTask(ctx context.Context, id string) error {
	return c.Call(ctx, MethodTasksCancel, map[string]any{"id": id})
}

func dispatch(method string) {
	switch method {
	case MethodTasksList, MethodTasksGet, MethodTasksSend:
	}
}
