// Package taskstore persists the wire task as it is, in envelopes and raw
// documents: a storage layer reads back what it stored, and the wire type
// is reported where it is declared, not here.
package taskstore

// Task stands for the wire type of another package.
type Task struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
	TTLMs  *int64 `json:"ttlMs"`
}

type envelope struct {
	Task    Task   `json:"task"`
	SavedAt string `json:"savedAt"`
}

// Document is the stored raw document of a task.
func Document(t Task) map[string]any {
	return map[string]any{"task": t, "savedAt": "now"}
}

// Expiry reads a stored document's legacy fields.
func Expiry(doc map[string]any) any {
	_ = doc["taskId"]
	return doc["ttl"]
}

var _ = envelope{}
