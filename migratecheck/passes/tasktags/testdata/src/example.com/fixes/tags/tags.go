// Package fixes/tags holds task-shaped wire structs whose legacy tags the
// opt-in fix renames.
package tags

// Task is the wire shape.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	CreatedAt     string `json:"createdAt"`
	TTL           *int64 `json:"ttl"`                    // want `^MCP006: json tag "ttl" in task-shaped struct Task is the legacy Task`
	PollInterval  *int64 `json:"pollInterval,omitempty"` // want `^MCP007: json tag "pollInterval" in task-shaped struct Task is the legacy`
	StatusMessage string `json:"statusMessage,omitempty"`
}

var quoted struct {
	TaskID string "json:\"taskId\""
	Status string "json:\"status\""
	TTL    int    "json:\"ttl,omitempty\"" // want `^MCP006: json tag "ttl" in task-shaped struct anonymous struct is the`
}
