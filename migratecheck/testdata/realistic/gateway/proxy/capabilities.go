package proxy

// serverCapabilities is what the gateway declares in initialize. The task
// part is assembled separately because it depends on what the upstreams
// support.
func serverCapabilities() map[string]any {
	caps := map[string]any{
		"tools":   map[string]any{"listChanged": true},
		"logging": map[string]any{},
	}
	tasks := map[string]any{
		"list":   map[string]any{},
		"cancel": map[string]any{},
	}
	tasks["requests"] = map[string]any{"tools": map[string]any{"call": map[string]any{}}}
	caps["tasks"] = tasks // want MCP004
	return caps
}
