// Package r2sent serves its storage records to 2025-11-25 peers as they
// are: a database record that reaches a JSON-RPC reply is a wire type, so
// its legacy tags are reported, and never renamed (its columns must keep
// their names).
package r2sent

// record is a stored task, also the tasks/result reply.
type record struct {
	TaskID string `db:"task_id" json:"taskId"`
	Status string `db:"status" json:"status"`
	TTL    int64  `db:"ttl" json:"ttl"` // want `^MCP006: json tag "ttl" in task-shaped struct record is the legacy Task`
}

func dispatch(method string) any {
	switch method {
	case "tasks/result":
		return record{}
	}
	return nil
}
