package proxy

import "time"

// wireTask is the task object the gateway returns for tasks it runs itself
// (fan-out tool calls).
type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`                    // want MCP006
	PollInterval  *int64 `json:"pollInterval,omitempty"` // want MCP007
}

// createdTask answers a fan-out tools/call with the task it started.
func createdTask(id string, ttl time.Duration) map[string]any {
	ms := ttl.Milliseconds()
	return map[string]any{"task": wireTask{ // want MCP008
		TaskID:    id,
		Status:    "working",
		CreatedAt: time.Now().UTC().Format(time.RFC3339),
		TTL:       &ms,
	}}
}

var _ = createdTask
