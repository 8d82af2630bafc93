// Package wrapper re-exports mcp-go the way toolkits do (catalogue §2.8).
package wrapper

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type (
	Task          = mcp.Task
	TaskSupport   = mcp.TaskSupport   // want `mcp-go mcp.TaskSupport declares the removed tool execution.taskSupport`
	ToolExecution = mcp.ToolExecution // want `mcp.ToolExecution declares`
)

const TaskSupportRequired = mcp.TaskSupportRequired // want `mcp.TaskSupportRequired declares`

const MethodResult = string(mcp.MethodTasksResult) // want `mcp.MethodTasksResult names the removed method`

var EnableTasks = server.WithTaskCapabilities // want `server.WithTaskCapabilities enables`

// Tasks is a thin wrapper function.
func Tasks() server.ServerOption {
	return server.WithTaskCapabilities(false, true, true) // want `server.WithTaskCapabilities enables`
}

// NotAWrapper does more than forward a call: no fact.
func NotAWrapper() server.ServerOption {
	opt := server.WithToolCapabilities(true)
	return opt
}
