// Package dotimport uses mcp-go through a dot-import.
package dotimport

import (
	. "github.com/mark3labs/mcp-go/mcp"
)

func use(t Task) any {
	_ = MethodTasksResult                   // want `^MCP001: mcp-go mcp\.MethodTasksResult names the removed method`
	_ = CallToolParams{Task: &TaskParams{}} // want `^MCP005: mcp-go mcp\.CallToolParams\.Task is the removed per-request`
	return NewCreateTaskResult(t)           // want `^MCP008: mcp-go mcp\.NewCreateTaskResult is the nested 2025-11-25`
}
