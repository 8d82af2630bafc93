// Package client calls tools of 2025-11-25 servers as tasks, by hand.
package client

import "encoding/json"

// CallParams builds tools/call params asking for a task.
func CallParams(name string, args map[string]any) ([]byte, error) {
	return json.Marshal(map[string]any{
		"name":      name,
		"arguments": args,
		"task":      map[string]any{"ttl": 60000, "pollInterval": 1000}, // want MCP005
	})
}

// Poll reads the legacy fields of a task result by hand.
func Poll(result map[string]any) (id string, wait float64) {
	id, _ = result["taskId"].(string)
	if s, _ := result["status"].(string); s == "completed" {
		return id, 0
	}
	wait, _ = result["pollInterval"].(float64) // want MCP007
	return id, wait
}

// TaskHint returns the task hint of received tools/call params.
func TaskHint(params map[string]any) any {
	if _, ok := params["name"]; !ok {
		return nil
	}
	return params["task"] // want MCP005
}
