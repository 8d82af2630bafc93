// Package wrapper re-exports mcp-go the way toolkits do (catalogue §2.8).
package wrapper

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type (
	Task          = mcp.Task
	TaskSupport   = mcp.TaskSupport   // want `^MCP009: mcp-go mcp\.TaskSupport declares the removed tool`
	ToolExecution = mcp.ToolExecution // want `^MCP009: mcp-go mcp\.ToolExecution declares the removed tool`
)

const TaskSupportRequired = mcp.TaskSupportRequired // want `^MCP009: mcp-go mcp\.TaskSupportRequired declares the removed tool`

const MethodResult = string(mcp.MethodTasksResult) // want `^MCP001: mcp-go mcp\.MethodTasksResult names the removed method`

var EnableTasks = server.WithTaskCapabilities // want `^MCP004: mcp-go server\.WithTaskCapabilities enables mcp-go's 2025-11-25` `^note: 2025-11-25 engine: mcp-go server\.WithTaskCapabilities`

// Tasks is a thin wrapper function.
func Tasks() server.ServerOption {
	return server.WithTaskCapabilities(false, true, true) // want `^MCP004: mcp-go server\.WithTaskCapabilities enables mcp-go's 2025-11-25` `^note: 2025-11-25 engine: mcp-go server\.WithTaskCapabilities`
}

// NotAWrapper does more than forward a call: no fact.
func NotAWrapper() server.ServerOption {
	opt := server.WithToolCapabilities(true)
	return opt
}
