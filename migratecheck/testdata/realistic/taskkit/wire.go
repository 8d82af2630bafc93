package taskkit

// Task is the wire form of a task that Router returns.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	TTL           *int64 `json:"ttl"` // want MCP006
}

func toWire(r *Record) Task {
	return Task{TaskID: r.ID, Status: r.Status, StatusMessage: r.Message}
}
