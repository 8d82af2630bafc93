package main

import "encoding/json"

// callOutcome decodes a tools/call answer that may be a task: the server
// either returns content or a task handle.
type callOutcome struct {
	Content []json.RawMessage `json:"content,omitempty"`
	IsError bool              `json:"isError,omitempty"`
	Task    *struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	} `json:"task,omitempty"` // want MCP008
}
