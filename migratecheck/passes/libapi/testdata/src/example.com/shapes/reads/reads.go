// Package reads only reads the legacy tool execution field: the message says
// so instead of "declares".
package reads

import "github.com/mark3labs/mcp-go/mcp"

func runsAsTask(tool mcp.Tool) bool {
	if tool.Execution == nil { // want `^MCP009: mcp-go mcp\.Tool\.Execution is read here; it holds the removed`
		return false
	}
	return true
}

func declare() mcp.Tool {
	return mcp.Tool{Execution: &mcp.ToolExecution{}} // want `^MCP009: mcp-go mcp\.Tool\.Execution declares the removed tool`
}
