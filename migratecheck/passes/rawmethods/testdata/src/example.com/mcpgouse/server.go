package mcpgouse

import (
	"example.com/std/context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func newServer() *server.MCPServer {
	s := server.NewMCPServer("demo", "1.0.0",
		server.WithTaskCapabilities(
			true,
			true, true),
		server.WithMaxConcurrentTasks(4), // engine configuration: not flagged on its own
		server.WithTaskHooks(&server.TaskHooks{}),
	)
	var h server.TaskToolHandlerFunc = handler
	s.AddTaskTool(mcp.NewTool("render"), h)
	tt := server.ServerTaskTool{}
	s.AddTaskTools(tt)
	return s
}

func handler(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
	return nil, nil
}

func hooks() {
	var h server.Hooks
	h.AddBeforeTaskResult(nil)
	h.AddAfterTaskResult(nil)
	var b server.OnBeforeTaskResultFunc
	var a server.OnAfterTaskResultFunc
	_ = h.OnBeforeTaskResult
	_ = h.OnAfterTaskResult
	h.AddBeforeListTasks(nil)
	h.AddAfterListTasks(nil)
	var lb server.OnBeforeListTasksFunc
	var la server.OnAfterListTasksFunc
	_ = h.OnBeforeListTasks
	_ = h.OnAfterListTasks
	h.AddBeforeGetTask(nil)   // still valid: not flagged
	h.AddAfterCancelTask(nil) // still valid: not flagged
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
