// Package serveslegacy still dispatches tasks/result for 2025-11-25 peers, so
// its task struct keeps the legacy tag (no fix).
package serveslegacy

type task struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
	TTL    *int64 `json:"ttl"` // want `^MCP006: json tag "ttl" in task-shaped struct task is the legacy Task`
}

func dispatch(method string) any {
	switch method {
	case "tasks/result":
		return task{}
	}
	return nil
}
