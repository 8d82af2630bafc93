// Package wrapper re-exports mcp-go the way toolkits do (catalogue §2.8).
package wrapper

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type (
	Task          = mcp.Task
	TaskSupport   = mcp.TaskSupport
	ToolExecution = mcp.ToolExecution
)

const TaskSupportRequired = mcp.TaskSupportRequired // want TaskSupportRequired:`^reexports mcpgo:mcp\.TaskSupportRequired`

const MethodResult = string(mcp.MethodTasksResult) // want MethodResult:`^reexports mcpgo:mcp\.MethodTasksResult`

var EnableTasks = server.WithTaskCapabilities // want EnableTasks:`^reexports mcpgo:server\.WithTaskCapabilities`

// Tasks is a thin wrapper function.
func Tasks() server.ServerOption { // want Tasks:`^reexports mcpgo:server\.WithTaskCapabilities`
	return server.WithTaskCapabilities(false, true, true)
}

// NotAWrapper does more than forward a call: no fact.
func NotAWrapper() server.ServerOption {
	opt := server.WithToolCapabilities(true)
	return opt
}
