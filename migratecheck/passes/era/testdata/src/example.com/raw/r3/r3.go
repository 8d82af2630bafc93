// Package r3 exercises rule R3: the nested CreateTaskResult.
package r3 // want `^note: implements the tasks extension`

import "example.com/std/json"

type task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
}

type createTaskResult struct {
	Task task `json:"task"`
}

// callResult is the probe idiom: decode tools/call once, check for "task".
type callResult struct {
	Content []json.RawMessage `json:"content"`
	Task    json.RawMessage   `json:"task,omitempty"`
}

func handle(t task) (any, error) {
	return map[string]any{"task": t}, nil
}

func handleRaw(id string) map[string]any {
	resp := map[string]any{}
	resp["result"] = map[string]any{"task": map[string]any{"taskId": id, "status": "working"}}
	return resp
}

// Negatives.

// A2A-style message with a task that is not MCP task-shaped.
type a2aTask struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

type message struct {
	Task *a2aTask `json:"task,omitempty"`
	Text string   `json:"text"`
}

// A "task" label string.
type job struct {
	Task    string `json:"task"`
	Content string `json:"content"`
}

// Flat, already-migrated task result.
func modern(t task) map[string]any {
	return map[string]any{"resultType": "task", "taskId": t.TaskID, "status": t.Status}
}

func notAResult(t task) {
	logged := map[string]any{"task": t} // a log field, not a result
	_ = logged
}

var _ = []any{message{}, job{}}
