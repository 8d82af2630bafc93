// Package v2 is the 2026-07-28 engine: it advertises and implements the
// extension, and converts tasks the 2025-11-25 engine stored.
package v2

import "encoding/json"

// Task is the extension's task.
type Task struct {
	ResultType     string `json:"resultType"`
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
}

// Discover is the server/discover result.
func Discover() map[string]any {
	return map[string]any{"capabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
}

// Handle serves the extension's methods.
func Handle(method string, params json.RawMessage) any {
	switch method {
	case "tasks/update":
		return map[string]any{}
	case "tasks/get":
		return Task{ResultType: "task", TaskID: "t", Status: "working"}
	}
	return nil
}

// FromLegacy converts a task the 2025-11-25 engine stored.
func FromLegacy(raw []byte) (Task, error) {
	var old map[string]any
	if err := json.Unmarshal(raw, &old); err != nil {
		return Task{}, err
	}
	t := Task{ResultType: "task"}
	t.TaskID, _ = old["taskId"].(string)
	t.Status, _ = old["status"].(string)
	if v, ok := old["ttl"].(float64); ok { // want MCP006:info
		ms := int64(v)
		t.TTLMs = &ms
	}
	if v, ok := old["pollInterval"].(float64); ok { // want MCP007:info
		ms := int64(v)
		t.PollIntervalMs = &ms
	}
	return t, nil
}
