// Package nested2 decodes a tools/call result that may nest a task with only
// its taskId and status.
package nested2

type taskRef struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
}

type callResult struct {
	Content []any    `json:"content"`
	Task    *taskRef `json:"task,omitempty"` // want `^MCP008: callResult nests a task-shaped value under json "task" \(the`
}

type inline struct {
	Task struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	} `json:"task"` // want `^MCP008: inline nests a task-shaped value under json "task" \(the`
}

// A job reference with other keys is not a task.
type jobRef struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
	Queue  string `json:"queue"`
}

type queued struct {
	Task jobRef `json:"task"`
}

var _ = []any{callResult{}, inline{}, queued{}}
