// Package a2a bridges the gateway to Agent2Agent (A2A) agents, whose task
// API has its own names and has nothing to do with MCP tasks.
package a2a

import (
	"context"
	"encoding/json"
)

// A2A JSON-RPC method names.
const (
	MethodSendMessage = "message/send"
	MethodTasksGet    = "tasks/get"
	MethodTasksCancel = "tasks/cancel"
	MethodTasksList   = "ListTasks"
)

// Task is an A2A task.
type Task struct {
	ID        string          `json:"id"`
	ContextID string          `json:"contextId"`
	Status    TaskStatus      `json:"status"`
	History   json.RawMessage `json:"history,omitempty"`
}

// TaskStatus is an A2A task status with its timestamp.
type TaskStatus struct {
	State     string `json:"state"`
	Timestamp string `json:"timestamp,omitempty"`
}

// ListTasksRequest pages through an agent's tasks.
type ListTasksRequest struct {
	PageSize  int    `json:"pageSize,omitempty"`
	PageToken string `json:"pageToken,omitempty"`
}

// Client calls one A2A agent.
type Client struct {
	Call func(ctx context.Context, method string, params, out any) error
}

// ListTasks lists the agent's tasks.
func (c *Client) ListTasks(ctx context.Context, req ListTasksRequest) ([]Task, error) {
	var out struct {
		Tasks []Task `json:"tasks"`
	}
	err := c.Call(ctx, MethodTasksList, req, &out)
	return out.Tasks, err
}

// GetTask fetches one task.
func (c *Client) GetTask(ctx context.Context, id string) (*Task, error) {
	var t Task
	err := c.Call(ctx, MethodTasksGet, map[string]string{"id": id}, &t)
	return &t, err
}
