// Package r2sent serves its storage records to 2025-11-25 peers as they
// are: a database record that reaches a JSON-RPC reply is a wire type, so
// its legacy tags are reported, and never renamed (its columns must keep
// their names).
package r2sent // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

// record is a stored task, also the tasks/result reply.
type record struct {
	TaskID string `db:"task_id" json:"taskId"`
	Status string `db:"status" json:"status"`
	TTL    int64  `db:"ttl" json:"ttl"`
}

func dispatch(method string) any {
	switch method {
	case "tasks/result": // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(in a method`
		return record{}
	}
	return nil
}
