// Package wire decodes the task objects the assistant reads from servers
// that do not use mcp-go.
package wire

// Task is a task as a server reports it.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	TTL           *int64 `json:"ttl"`                    // want MCP006+fix
	PollInterval  *int64 `json:"pollInterval,omitempty"` // want MCP007+fix
}
