// Package wire holds the task object the engine sends to 2025-11-25 peers;
// the store persists the same struct.
package wire

// Task is the task object on the wire.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	TTL           *int64 `json:"ttl"`                    // want MCP006
	PollInterval  *int64 `json:"pollInterval,omitempty"` // want MCP007
}
