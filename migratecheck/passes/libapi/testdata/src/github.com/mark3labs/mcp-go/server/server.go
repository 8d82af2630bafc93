// Package server is a test stub of github.com/mark3labs/mcp-go/server.
package server

import (
	"example.com/std/context"
	"example.com/std/time"

	"github.com/mark3labs/mcp-go/mcp"
)

type MCPServer struct{ hooks *Hooks }

type ServerOption func(*MCPServer)

func NewMCPServer(name, version string, opts ...ServerOption) *MCPServer { return &MCPServer{} }

type ToolHandlerFunc func(ctx context.Context, request mcp.CallToolRequest) (*mcp.CallToolResult, error)

type TaskToolHandlerFunc func(ctx context.Context, request mcp.CallToolRequest) (*mcp.CreateTaskResult, error) // want `^MCP008: mcp-go mcp\.CreateTaskResult is the nested 2025-11-25`

type ServerTool struct {
	Tool    mcp.Tool
	Handler ToolHandlerFunc
}

type ServerTaskTool struct {
	Tool    mcp.Tool
	Handler TaskToolHandlerFunc
}

func (s *MCPServer) AddTool(tool mcp.Tool, handler ToolHandlerFunc)                    {}
func (s *MCPServer) AddTaskTool(tool mcp.Tool, handler TaskToolHandlerFunc)            {}
func (s *MCPServer) AddTaskTools(taskTools ...ServerTaskTool)                          {}
func (s *MCPServer) SendNotificationToAllClients(method string, params map[string]any) {}

func WithToolCapabilities(listChanged bool) ServerOption                 { return nil }
func WithTaskCapabilities(list, cancel, toolCallTasks bool) ServerOption { return nil }
func WithExtensions(extensions map[string]any) ServerOption              { return nil }
func WithHooks(hooks *Hooks) ServerOption                                { return nil }
func WithTaskHooks(taskHooks *TaskHooks) ServerOption                    { return nil }
func WithMaxConcurrentTasks(limit int) ServerOption                      { return nil }

type OnBeforeGetTaskFunc func(ctx context.Context, id any, message *mcp.GetTaskRequest)
type OnAfterGetTaskFunc func(ctx context.Context, id any, message *mcp.GetTaskRequest, result *mcp.GetTaskResult)          // want `^MCP015: mcp-go mcp\.GetTaskResult is the legacy tasks/get result \(a bare`
type OnBeforeListTasksFunc func(ctx context.Context, id any, message *mcp.ListTasksRequest)                                // want `^MCP002: mcp-go mcp\.ListTasksRequest belongs to the removed tasks/list`
type OnAfterListTasksFunc func(ctx context.Context, id any, message *mcp.ListTasksRequest, result *mcp.ListTasksResult)    // want `^MCP002: mcp-go mcp\.ListTasksRequest belongs to the removed tasks/list`
type OnBeforeTaskResultFunc func(ctx context.Context, id any, message *mcp.TaskResultRequest)                              // want `^MCP001: mcp-go mcp\.TaskResultRequest belongs to the removed tasks/result`
type OnAfterTaskResultFunc func(ctx context.Context, id any, message *mcp.TaskResultRequest, result *mcp.TaskResultResult) // want `^MCP001: mcp-go mcp\.TaskResultRequest belongs to the removed tasks/result`
type OnBeforeCancelTaskFunc func(ctx context.Context, id any, message *mcp.CancelTaskRequest)
type OnAfterCancelTaskFunc func(ctx context.Context, id any, message *mcp.CancelTaskRequest, result *mcp.CancelTaskResult) // want `^MCP012: mcp-go mcp\.CancelTaskResult is the legacy tasks/cancel result`

type Hooks struct {
	OnBeforeGetTask    []OnBeforeGetTaskFunc
	OnAfterGetTask     []OnAfterGetTaskFunc
	OnBeforeListTasks  []OnBeforeListTasksFunc
	OnAfterListTasks   []OnAfterListTasksFunc
	OnBeforeTaskResult []OnBeforeTaskResultFunc
	OnAfterTaskResult  []OnAfterTaskResultFunc
	OnBeforeCancelTask []OnBeforeCancelTaskFunc
	OnAfterCancelTask  []OnAfterCancelTaskFunc
}

func (c *Hooks) AddBeforeGetTask(hook OnBeforeGetTaskFunc)       {}
func (c *Hooks) AddAfterGetTask(hook OnAfterGetTaskFunc)         {}
func (c *Hooks) AddBeforeListTasks(hook OnBeforeListTasksFunc)   {}
func (c *Hooks) AddAfterListTasks(hook OnAfterListTasksFunc)     {}
func (c *Hooks) AddBeforeTaskResult(hook OnBeforeTaskResultFunc) {}
func (c *Hooks) AddAfterTaskResult(hook OnAfterTaskResultFunc)   {}
func (c *Hooks) AddBeforeCancelTask(hook OnBeforeCancelTaskFunc) {}
func (c *Hooks) AddAfterCancelTask(hook OnAfterCancelTaskFunc)   {}

type TaskMetrics struct {
	TaskID      string
	ToolName    string
	Status      mcp.TaskStatus
	CreatedAt   time.Time
	CompletedAt *time.Time
}

type OnTaskCreatedHookFunc func(ctx context.Context, metrics TaskMetrics)
type OnTaskCompletedHookFunc func(ctx context.Context, metrics TaskMetrics)
type OnTaskFailedHookFunc func(ctx context.Context, metrics TaskMetrics)
type OnTaskCancelledHookFunc func(ctx context.Context, metrics TaskMetrics)
type OnTaskStatusChangedHookFunc func(ctx context.Context, metrics TaskMetrics)

type TaskHooks struct {
	OnTaskCreated       []OnTaskCreatedHookFunc
	OnTaskCompleted     []OnTaskCompletedHookFunc
	OnTaskFailed        []OnTaskFailedHookFunc
	OnTaskCancelled     []OnTaskCancelledHookFunc
	OnTaskStatusChanged []OnTaskStatusChangedHookFunc
}

func (h *TaskHooks) AddOnTaskCreated(hook OnTaskCreatedHookFunc)             {}
func (h *TaskHooks) AddOnTaskCompleted(hook OnTaskCompletedHookFunc)         {}
func (h *TaskHooks) AddOnTaskFailed(hook OnTaskFailedHookFunc)               {}
func (h *TaskHooks) AddOnTaskCancelled(hook OnTaskCancelledHookFunc)         {}
func (h *TaskHooks) AddOnTaskStatusChanged(hook OnTaskStatusChangedHookFunc) {}
