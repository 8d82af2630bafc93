package mcpgouse

import (
	"example.com/std/context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func newServer() *server.MCPServer {
	s := server.NewMCPServer("demo", "1.0.0",
		server.WithTaskCapabilities( // want `^MCP004: mcp-go server\.WithTaskCapabilities enables mcp-go's 2025-11-25` `^note: 2025-11-25 engine: mcp-go server\.WithTaskCapabilities`
			true, // want `^MCP002: mcp-go server\.WithTaskCapabilities\(list=true, …\) serves the`
			true, true),
		server.WithMaxConcurrentTasks(4),          // engine configuration: not flagged on its own // want `^note: 2025-11-25 engine: mcp-go server\.WithMaxConcurrentTasks`
		server.WithTaskHooks(&server.TaskHooks{}), // want `^note: 2025-11-25 engine: mcp-go server\.WithTaskHooks` `^note: 2025-11-25 engine: mcp-go server\.TaskHooks`
	)
	var h server.TaskToolHandlerFunc = handler // want `^MCP008: mcp-go server\.TaskToolHandlerFunc registers a tool on mcp-go's` `^note: 2025-11-25 engine: mcp-go server\.TaskToolHandlerFunc`
	s.AddTaskTool(mcp.NewTool("render"), h)    // want `^MCP008: mcp-go server\.MCPServer\.AddTaskTool registers a tool on mcp-go's` `^note: 2025-11-25 engine: mcp-go server\.MCPServer\.AddTaskTool`
	tt := server.ServerTaskTool{}              // want `^MCP008: mcp-go server\.ServerTaskTool registers a tool on mcp-go's` `^note: 2025-11-25 engine: mcp-go server\.ServerTaskTool`
	s.AddTaskTools(tt)                         // want `^MCP008: mcp-go server\.MCPServer\.AddTaskTools registers a tool on` `^note: 2025-11-25 engine: mcp-go server\.MCPServer\.AddTaskTools`
	return s
}

func handler(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) { // want `^MCP008: mcp-go mcp\.CreateTaskResult is the nested 2025-11-25`
	return nil, nil
}

func hooks() {
	var h server.Hooks
	h.AddBeforeTaskResult(nil)          // want `^MCP001: mcp-go server\.Hooks\.AddBeforeTaskResult hooks the removed` `^note: 2025-11-25 engine: mcp-go server\.Hooks\.AddBeforeTaskResult`
	h.AddAfterTaskResult(nil)           // want `^MCP001: mcp-go server\.Hooks\.AddAfterTaskResult hooks the removed` `^note: 2025-11-25 engine: mcp-go server\.Hooks\.AddAfterTaskResult`
	var b server.OnBeforeTaskResultFunc // want `^MCP001: mcp-go server\.OnBeforeTaskResultFunc hooks the removed` `^note: 2025-11-25 engine: mcp-go server\.OnBeforeTaskResultFunc`
	var a server.OnAfterTaskResultFunc  // want `^MCP001: mcp-go server\.OnAfterTaskResultFunc hooks the removed` `^note: 2025-11-25 engine: mcp-go server\.OnAfterTaskResultFunc`
	_ = h.OnBeforeTaskResult            // want `^MCP001: mcp-go server\.Hooks\.OnBeforeTaskResult hooks the removed` `^note: 2025-11-25 engine: mcp-go server\.Hooks\.OnBeforeTaskResult`
	_ = h.OnAfterTaskResult             // want `^MCP001: mcp-go server\.Hooks\.OnAfterTaskResult hooks the removed` `^note: 2025-11-25 engine: mcp-go server\.Hooks\.OnAfterTaskResult`
	h.AddBeforeListTasks(nil)           // want `^MCP002: mcp-go server\.Hooks\.AddBeforeListTasks hooks the removed` `^note: 2025-11-25 engine: mcp-go server\.Hooks\.AddBeforeListTasks`
	h.AddAfterListTasks(nil)            // want `^MCP002: mcp-go server\.Hooks\.AddAfterListTasks hooks the removed` `^note: 2025-11-25 engine: mcp-go server\.Hooks\.AddAfterListTasks`
	var lb server.OnBeforeListTasksFunc // want `^MCP002: mcp-go server\.OnBeforeListTasksFunc hooks the removed tasks/list` `^note: 2025-11-25 engine: mcp-go server\.OnBeforeListTasksFunc`
	var la server.OnAfterListTasksFunc  // want `^MCP002: mcp-go server\.OnAfterListTasksFunc hooks the removed tasks/list` `^note: 2025-11-25 engine: mcp-go server\.OnAfterListTasksFunc`
	_ = h.OnBeforeListTasks             // want `^MCP002: mcp-go server\.Hooks\.OnBeforeListTasks hooks the removed` `^note: 2025-11-25 engine: mcp-go server\.Hooks\.OnBeforeListTasks`
	_ = h.OnAfterListTasks              // want `^MCP002: mcp-go server\.Hooks\.OnAfterListTasks hooks the removed` `^note: 2025-11-25 engine: mcp-go server\.Hooks\.OnAfterListTasks`
	h.AddBeforeGetTask(nil)             // still valid: not flagged
	h.AddAfterCancelTask(nil)           // still valid: not flagged
	_, _, _, _ = b, a, lb, la
}

// engineOnly uses engine configuration identifiers that are recorded for
// MCP014 but never reported on their own.
func engineOnly(th *server.TaskHooks) { // want `^note: 2025-11-25 engine: mcp-go server\.TaskHooks`
	th.AddOnTaskCreated(nil)                  // want `^note: 2025-11-25 engine: mcp-go server\.TaskHooks\.AddOnTaskCreated`
	th.AddOnTaskCompleted(nil)                // want `^note: 2025-11-25 engine: mcp-go server\.TaskHooks\.AddOnTaskCompleted`
	th.AddOnTaskFailed(nil)                   // want `^note: 2025-11-25 engine: mcp-go server\.TaskHooks\.AddOnTaskFailed`
	th.AddOnTaskCancelled(nil)                // want `^note: 2025-11-25 engine: mcp-go server\.TaskHooks\.AddOnTaskCancelled`
	th.AddOnTaskStatusChanged(nil)            // want `^note: 2025-11-25 engine: mcp-go server\.TaskHooks\.AddOnTaskStatusChanged`
	var m server.TaskMetrics                  // want `^note: 2025-11-25 engine: mcp-go server\.TaskMetrics`
	var f1 server.OnTaskCreatedHookFunc       // want `^note: 2025-11-25 engine: mcp-go server\.OnTaskCreatedHookFunc`
	var f2 server.OnTaskCompletedHookFunc     // want `^note: 2025-11-25 engine: mcp-go server\.OnTaskCompletedHookFunc`
	var f3 server.OnTaskFailedHookFunc        // want `^note: 2025-11-25 engine: mcp-go server\.OnTaskFailedHookFunc`
	var f4 server.OnTaskCancelledHookFunc     // want `^note: 2025-11-25 engine: mcp-go server\.OnTaskCancelledHookFunc`
	var f5 server.OnTaskStatusChangedHookFunc // want `^note: 2025-11-25 engine: mcp-go server\.OnTaskStatusChangedHookFunc`
	_, _, _, _, _, _ = m, f1, f2, f3, f4, f5
}
