package client

// taskHint is the task hint some clients send with a poll interval beside
// the ttl.
type taskHint struct {
	TTL          int64 `json:"ttl"`                    // want MCP005
	PollInterval int64 `json:"pollInterval,omitempty"` // want MCP005
}

// hinted is the part of a request that carries the hint.
type hinted struct {
	Task *taskHint `json:"task,omitempty"`
}

// WithHint asks for a task that lives a minute and is polled every second.
func WithHint() any { return hinted{Task: &taskHint{TTL: 60000, PollInterval: 1000}} }
