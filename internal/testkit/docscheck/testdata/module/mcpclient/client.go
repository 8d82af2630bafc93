// Package mcpclient is a hand-written MCP client of the kind teams migrate:
// raw JSON-RPC against the 2025-11-25 experimental tasks (the docs-check
// fixture: migrate-check finds MCP001 and MCP002 here).
package mcpclient

import "encoding/json"

// Request is one JSON-RPC request.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      int64           `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// TaskResult asks for a task's result with the blocking call that 2026-07-28
// removed.
func TaskResult(id int64, taskID string) (Request, error) {
	p, err := json.Marshal(map[string]string{"taskId": taskID})
	if err != nil {
		return Request{}, err
	}
	return Request{JSONRPC: "2.0", ID: id, Method: "tasks/result", Params: p}, nil
}

// ListTasks pages through the caller's tasks with the removed tasks/list.
func ListTasks(id int64, cursor string) (Request, error) {
	p, err := json.Marshal(map[string]string{"cursor": cursor})
	if err != nil {
		return Request{}, err
	}
	return Request{JSONRPC: "2.0", ID: id, Method: "tasks/list", Params: p}, nil
}
