// Package migrated is code already moved to the tasks extension, plus a
// 2026-07-28 server that rejects the removed methods. No finding expected.
package migrated

import (
	"example.com/std/context"
	"example.com/std/errors"
)

const (
	CodeMethodNotFound = -32601
	ExtensionID        = "io.modelcontextprotocol/tasks"
)

var ErrMethodNotFound = errors.New("method not found")

type Task struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
}

type DetailedTask struct {
	Task
	ResultType    string `json:"resultType"`
	Result        any    `json:"result,omitempty"`
	InputRequests any    `json:"inputRequests,omitempty"`
}

type rpc struct{}

func (rpc) Call(ctx context.Context, method string, params, result any) error { return nil }
func (rpc) Notify(ctx context.Context, method string, params any) error       { return nil }

func dispatch(method string) (any, error) {
	switch method {
	case "tasks/get", "tasks/update", "tasks/cancel":
		return nil, nil
	case "tasks/result", "tasks/list":
		return nil, ErrMethodNotFound
	}
	if method == "notifications/tasks/status" {
		return nil, errors.New("method not found")
	}
	return nil, nil
}

func poll(ctx context.Context, r rpc, id string) {
	var t DetailedTask
	_ = r.Call(ctx, "tasks/get", map[string]any{"taskId": id}, &t)
	if t.Status == "input_required" {
		_ = r.Call(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{}}, nil)
	}
	_ = r.Notify(ctx, "notifications/tasks", map[string]any{"taskId": id})
}

func discover() map[string]any {
	return map[string]any{
		"capabilities": map[string]any{
			"extensions": map[string]any{ExtensionID: map[string]any{}},
		},
	}
}

func create(t Task) map[string]any {
	return map[string]any{"resultType": "task", "taskId": t.TaskID, "status": t.Status}
}

func peerSupports(caps map[string]any) bool {
	_, ok := caps[ExtensionID]
	return ok
}
