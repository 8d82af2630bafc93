// Package capvar builds capabilities.tasks in a variable before assigning it,
// and declares a client capabilities struct whose siblings are sampling,
// roots and elicitation.
package capvar

func serverCaps(list bool) map[string]any {
	caps := map[string]any{"tools": map[string]any{}}
	tasks := map[string]any{"cancel": map[string]any{}}
	if list {
		tasks["list"] = map[string]any{}
	}
	caps["tasks"] = tasks // want `^MCP004: capabilities "tasks" \{list, cancel, requests\} is the 2025-11-25`
	return caps
}

func clientCaps() map[string]any {
	requests := map[string]any{"sampling": map[string]any{"createMessage": map[string]any{}}}
	tasks := map[string]any{}
	tasks["requests"] = requests
	return map[string]any{"roots": map[string]any{}, "tasks": tasks} // want `^MCP004: capabilities "tasks" \{list, cancel, requests\} is the 2025-11-25`
}

// ClientCapabilities mirrors the client side of initialize.
type ClientCapabilities struct {
	Roots       *struct{} `json:"roots,omitempty"`
	Sampling    *struct{} `json:"sampling,omitempty"`
	Elicitation *struct{} `json:"elicitation,omitempty"`
	Tasks       *struct{} `json:"tasks,omitempty"` // want `^MCP004: ClientCapabilities declares the 2025-11-25 capabilities\.tasks:`
}

// A list of tasks under "tasks" is not a capability.
func listing(ids []string) map[string]any {
	tasks := []string{}
	tasks = append(tasks, ids...)
	return map[string]any{"tasks": tasks}
}
