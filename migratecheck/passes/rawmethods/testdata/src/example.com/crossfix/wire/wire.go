// Package wire declares the task wire type; the server package that still
// serves 2025-11-25 peers uses it, which this package's types cannot show:
// the guard reads the other packages' files.
package wire

// Task is a task on the wire.
type Task struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
	TTL    *int64 `json:"ttl"`
}
