// Package r5 exercises rule R5: the per-request params.task.
package r5

func callTool(name string, args map[string]any, ttl int) map[string]any {
	return map[string]any{
		"name":      name,
		"arguments": args,
		"task":      map[string]any{"ttl": ttl}, // want `^MCP005: params "task" on tools/call is the removed 2025-11-25 task`
	}
}

func callToolIndexed(name string, ttl int) map[string]any {
	params := map[string]any{"name": name}
	params["arguments"] = map[string]any{}
	params["task"] = map[string]any{"ttl": ttl} // want `^MCP005: params "task" on tools/call is the removed 2025-11-25 task`
	return params
}

type toolsCallParams struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Task      *struct {
		TTL int `json:"ttl,omitempty"`
	} `json:"task,omitempty"` // want `^MCP005: params "task" on tools/call is the removed 2025-11-25 task`
}

func sampling() map[string]any {
	return map[string]any{
		"messages":  []any{},
		"maxTokens": 100,
		"task":      map[string]any{"ttl": 1000}, // want `^MCP013: params "task" on sampling/createMessage asks the client to host`
	}
}

func elicit(p map[string]any) {
	p["message"] = "confirm?"
	p["requestedSchema"] = map[string]any{}
	p["task"] = map[string]any{} // want `^MCP013: params "task" on elicitation/create asks the client to host a`
}

// Negatives.

func unrelated(id string) map[string]any {
	m := map[string]any{"task": id, "owner": "x"} // a job queue entry
	m["task"] = id
	return m
}

func otherFunc(params map[string]any) {
	params["task"] = "x" // no tools/call keys in this function
}

var _ = toolsCallParams{}
