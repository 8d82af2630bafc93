// Package serveslegacy still dispatches tasks/result for 2025-11-25 peers, so
// its task struct keeps the legacy tag (no fix).
package serveslegacy // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

type task struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
	TTL    *int64 `json:"ttl"`
}

func dispatch(method string) any {
	switch method {
	case "tasks/result": // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(in a method`
		return task{}
	}
	return nil
}
