// Package wrapper re-exports mcp-go the way toolkits do (catalogue §2.8).
package wrapper // want `^note: the package still serves 2025-11-25 peers \(it configures mcp-go`

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type (
	Task          = mcp.Task
	TaskSupport   = mcp.TaskSupport
	ToolExecution = mcp.ToolExecution
)

const TaskSupportRequired = mcp.TaskSupportRequired

const MethodResult = string(mcp.MethodTasksResult)

var EnableTasks = server.WithTaskCapabilities

// Tasks is a thin wrapper function.
func Tasks() server.ServerOption {
	return server.WithTaskCapabilities(false, true, true)
}

// NotAWrapper does more than forward a call: no fact.
func NotAWrapper() server.ServerOption {
	opt := server.WithToolCapabilities(true)
	return opt
}
