// Package wiretypes holds the JSON shapes the gateway and its plug-ins
// exchange with upstream servers.
package wiretypes

// UpstreamTask is a task as a 2025-11-25 upstream reports it.
type UpstreamTask struct {
	TaskID    string `json:"taskId"`
	Status    string `json:"status"`
	CreatedAt string `json:"createdAt"`
	TTL       *int64 `json:"ttl"` // want MCP006
}
