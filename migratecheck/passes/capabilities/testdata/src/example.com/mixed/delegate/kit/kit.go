// Package kit is a task library that advertises the extension and routes
// the 2025-11-25 methods itself (MCP014 here, where the engine is).
package kit

type Router struct{}

func Capabilities() map[string]any {
	return map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}} // want `^note: advertises the extension`
}

// Handle answers one request.
func (r *Router) Handle(method string, params []byte) (any, error) {
	switch method {
	case "tasks/list":
		return []string{}, nil
	}
	return nil, nil
}
