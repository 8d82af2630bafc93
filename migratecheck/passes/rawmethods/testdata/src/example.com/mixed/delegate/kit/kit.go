// Package kit is a task library that advertises the extension and routes
// the 2025-11-25 methods itself (MCP014 here, where the engine is).
package kit // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

type Router struct{}

func Capabilities() map[string]any {
	return map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
}

// Handle answers one request.
func (r *Router) Handle(method string, params []byte) (any, error) {
	switch method {
	case "tasks/list": // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(in a method`
		return []string{}, nil
	}
	return nil, nil
}
