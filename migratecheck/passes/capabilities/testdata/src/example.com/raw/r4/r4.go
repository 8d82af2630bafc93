// Package r4 exercises rule R4: capabilities.tasks.
package r4

func initializeResult() map[string]any {
	return map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{
			"tools": map[string]any{},
			"tasks": map[string]any{ // want `^MCP004: capabilities "tasks" \{list, cancel, requests\} is the 2025-11-25`
				"list":   map[string]any{},
				"cancel": map[string]any{},
				"requests": map[string]any{
					"tools":    map[string]any{"call": map[string]any{}},
					"sampling": map[string]any{"createMessage": map[string]any{}}, // want `^MCP013: capabilities\.tasks\.requests\.sampling declares client-hosted`
				},
			},
		},
	}
}

func clientCaps(caps map[string]any) {
	caps["tasks"] = map[string]any{ // want `^MCP004: capabilities "tasks" \{list, cancel, requests\} is the 2025-11-25`
		"requests": map[string]any{
			"elicitation": map[string]any{"create": map[string]any{}}, // want `^MCP013: capabilities\.tasks\.requests\.elicitation declares client-hosted`
		},
	}
}

type ServerCapabilities struct {
	Tools   *struct{}      `json:"tools,omitempty"`
	Logging *struct{}      `json:"logging,omitempty"`
	Tasks   *tasksCap      `json:"tasks,omitempty"` // want `^MCP004: ServerCapabilities declares the 2025-11-25 capabilities\.tasks:`
	Ext     map[string]any `json:"extensions,omitempty"`
}

type tasksCap struct {
	List *struct{} `json:"list,omitempty"`
}

// Negatives.

// A list of tasks in a result.
type listResult struct {
	Tasks      []string `json:"tasks"`
	NextCursor string   `json:"nextCursor,omitempty"`
}

// A scheduler config that happens to have "tasks" next to "tools".
type workerConfig struct {
	Tools []string          `json:"tools"`
	Tasks map[string]string `json:"tasks"`
}

func notCaps() map[string]any {
	return map[string]any{"tasks": map[string]any{"pending": 3, "done": 4}}
}

var _ = []any{listResult{}, workerConfig{}}
