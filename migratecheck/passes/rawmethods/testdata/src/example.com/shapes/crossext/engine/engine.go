// Package engine is a legacy task dispatcher; it advertises nothing.
package engine // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

// Dispatch serves the legacy blocking result method.
func Dispatch(method string) any {
	switch method {
	case "tasks/result": // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(in a method`
		return struct{}{}
	}
	return nil
}
