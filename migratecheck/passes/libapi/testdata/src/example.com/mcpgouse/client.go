package mcpgouse

import (
	"example.com/std/context"
	"example.com/std/errors"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func useClient(ctx context.Context, c *client.Client, err error) {
	_, _ = c.TaskResult(ctx, mcp.TaskResultRequest{})         // want `^MCP001: mcp-go client\.Client\.TaskResult calls the removed tasks/result`
	_, _ = c.ListTasks(ctx, mcp.ListTasksRequest{})           // want `^MCP002: mcp-go client\.Client\.ListTasks calls the removed tasks/list`
	_, _ = c.ListTasksByPage(ctx, mcp.ListTasksRequest{})     // want `^MCP002: mcp-go client\.Client\.ListTasksByPage calls the removed`
	_ = errors.Is(err, client.ErrRepeatedTaskListCursor)      // want `^MCP002: mcp-go client\.ErrRepeatedTaskListCursor calls the removed`
	_, _ = c.CancelTask(ctx, mcp.CancelTaskRequest{})         // want `^MCP012: mcp-go client\.Client\.CancelTask expects tasks/cancel to return`
	_, _ = c.WaitForTask(ctx, "t", 0)                         // want `^MCP007: mcp-go client\.Client\.WaitForTask polls with the legacy`
	_ = errors.Is(err, client.ErrInvalidFallbackPollInterval) // want `^MCP007: mcp-go client\.ErrInvalidFallbackPollInterval polls with the`
	_ = errors.Is(err, client.ErrServerPollIntervalOverflow)  // want `^MCP007: mcp-go client\.ErrServerPollIntervalOverflow polls with the`
	_, _ = c.GetTask(ctx, mcp.GetTaskRequest{})               // still valid: not flagged
}
