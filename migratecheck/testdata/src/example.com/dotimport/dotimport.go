// Package dotimport uses mcp-go through a dot-import.
package dotimport

import (
	. "github.com/mark3labs/mcp-go/mcp"
)

func use(t Task) any {
	_ = MethodTasksResult                   // want `mcp-go mcp.MethodTasksResult names the removed method "tasks/result"`
	_ = CallToolParams{Task: &TaskParams{}} // want `mcp.CallToolParams.Task is the removed per-request params.task`
	return NewCreateTaskResult(t)           // want `mcp.NewCreateTaskResult is the nested`
}
