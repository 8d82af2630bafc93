package mcpgouse

import (
	"example.com/std/context"
	"example.com/std/errors"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func useClient(ctx context.Context, c *client.Client, err error) {
	_, _ = c.TaskResult(ctx, mcp.TaskResultRequest{})         // want `mcp-go client.Client.TaskResult calls the removed tasks/result method.*client.WaitForTask does the polling`
	_, _ = c.ListTasks(ctx, mcp.ListTasksRequest{})           // want `client.Client.ListTasks calls the removed tasks/list method`
	_, _ = c.ListTasksByPage(ctx, mcp.ListTasksRequest{})     // want `client.Client.ListTasksByPage calls`
	_ = errors.Is(err, client.ErrRepeatedTaskListCursor)      // want `client.ErrRepeatedTaskListCursor calls`
	_, _ = c.CancelTask(ctx, mcp.CancelTaskRequest{})         // want `client.Client.CancelTask expects tasks/cancel to return the Task`
	_, _ = c.WaitForTask(ctx, "t", 0)                         // want `client.Client.WaitForTask polls with the legacy Task.PollInterval`
	_ = errors.Is(err, client.ErrInvalidFallbackPollInterval) // want `client.ErrInvalidFallbackPollInterval polls`
	_ = errors.Is(err, client.ErrServerPollIntervalOverflow)  // want `client.ErrServerPollIntervalOverflow polls`
	_, _ = c.GetTask(ctx, mcp.GetTaskRequest{})               // still valid: not flagged
}
