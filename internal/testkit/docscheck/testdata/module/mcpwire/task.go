// Package mcpwire holds hand-written task wire types with the 2025-11-25
// field names (migrate-check: MCP006 and MCP007, fixable with -fix-tags).
package mcpwire

// Task is a task as 2025-11-25 servers send it.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  *int64 `json:"pollInterval,omitempty"`
}
