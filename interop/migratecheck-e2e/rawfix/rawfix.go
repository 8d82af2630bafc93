// Package rawfix speaks the task wire format without a library. Its Task type
// is task-shaped with json-only tags, so -fix-tags may rename ttl and
// pollInterval to the extension's ttlMs and pollIntervalMs.
package rawfix

// Task is a hand-written legacy task.
type Task struct {
	TaskID       string `json:"taskId"`
	Status       string `json:"status"`
	CreatedAt    string `json:"createdAt"`
	TTL          *int64 `json:"ttl"`
	PollInterval *int64 `json:"pollInterval,omitempty"`
}
