package mcpgouse

import (
	"example.com/std/context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func newServer() *server.MCPServer {
	s := server.NewMCPServer("demo", "1.0.0",
		server.WithTaskCapabilities( // want `mcp-go server.WithTaskCapabilities enables mcp-go's 2025-11-25 task engine.*provides server.WithExtensions.*\[info\]$`
			true, // want `WithTaskCapabilities\(list=true, …\) serves the removed tasks/list method`
			true, true),
		server.WithMaxConcurrentTasks(4), // engine configuration: not flagged on its own
		server.WithTaskHooks(&server.TaskHooks{}),
	)
	var h server.TaskToolHandlerFunc = handler // want `server.TaskToolHandlerFunc registers a tool on mcp-go's 2025-11-25 task engine`
	s.AddTaskTool(mcp.NewTool("render"), h)    // want `server.MCPServer.AddTaskTool registers`
	tt := server.ServerTaskTool{}              // want `server.ServerTaskTool registers`
	s.AddTaskTools(tt)                         // want `server.MCPServer.AddTaskTools registers`
	return s
}

func handler(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) { // want `mcp.CreateTaskResult is the nested`
	return nil, nil
}

func hooks() {
	var h server.Hooks
	h.AddBeforeTaskResult(nil)          // want `server.Hooks.AddBeforeTaskResult hooks the removed tasks/result method`
	h.AddAfterTaskResult(nil)           // want `server.Hooks.AddAfterTaskResult hooks`
	var b server.OnBeforeTaskResultFunc // want `server.OnBeforeTaskResultFunc hooks`
	var a server.OnAfterTaskResultFunc  // want `server.OnAfterTaskResultFunc hooks`
	_ = h.OnBeforeTaskResult            // want `server.Hooks.OnBeforeTaskResult hooks`
	_ = h.OnAfterTaskResult             // want `server.Hooks.OnAfterTaskResult hooks`
	h.AddBeforeListTasks(nil)           // want `server.Hooks.AddBeforeListTasks hooks the removed tasks/list method`
	h.AddAfterListTasks(nil)            // want `server.Hooks.AddAfterListTasks hooks`
	var lb server.OnBeforeListTasksFunc // want `server.OnBeforeListTasksFunc hooks`
	var la server.OnAfterListTasksFunc  // want `server.OnAfterListTasksFunc hooks`
	_ = h.OnBeforeListTasks             // want `server.Hooks.OnBeforeListTasks hooks`
	_ = h.OnAfterListTasks              // want `server.Hooks.OnAfterListTasks hooks`
	h.AddBeforeGetTask(nil)             // still valid: not flagged
	h.AddAfterCancelTask(nil)           // still valid: not flagged
	_, _, _, _ = b, a, lb, la
}

// engineOnly uses engine configuration identifiers that are recorded for
// MCP014 but never reported on their own.
func engineOnly(th *server.TaskHooks) {
	th.AddOnTaskCreated(nil)
	th.AddOnTaskCompleted(nil)
	th.AddOnTaskFailed(nil)
	th.AddOnTaskCancelled(nil)
	th.AddOnTaskStatusChanged(nil)
	var m server.TaskMetrics
	var f1 server.OnTaskCreatedHookFunc
	var f2 server.OnTaskCompletedHookFunc
	var f3 server.OnTaskFailedHookFunc
	var f4 server.OnTaskCancelledHookFunc
	var f5 server.OnTaskStatusChangedHookFunc
	_, _, _, _, _, _ = m, f1, f2, f3, f4, f5
}
