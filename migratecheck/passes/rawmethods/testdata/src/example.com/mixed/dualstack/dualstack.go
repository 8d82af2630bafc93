// Package dualstack serves 2025-11-25 sessions with its legacy dispatcher
// and 2026-07-28 requests with its own extension engine (tasks/update,
// resultType "task"): advertising the extension is true, so no MCP014.
package dualstack // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

func discover() map[string]any {
	return map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
}

func dispatch(method string, modern bool) any {
	if modern {
		switch method {
		case "tasks/update":
			return nil
		}
		return map[string]any{"resultType": "task", "taskId": "t", "status": "working"}
	}
	switch method {
	case "tasks/result": // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(in a method`
		return nil
	}
	return nil
}
