package mcpgouse // want `^note: the package still serves 2025-11-25 peers \(it configures mcp-go`

import (
	"example.com/std/context"
	"example.com/std/errors"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func useClient(ctx context.Context, c *client.Client, err error) {
	_, _ = c.TaskResult(ctx, mcp.TaskResultRequest{})
	_, _ = c.ListTasks(ctx, mcp.ListTasksRequest{})
	_, _ = c.ListTasksByPage(ctx, mcp.ListTasksRequest{})
	_ = errors.Is(err, client.ErrRepeatedTaskListCursor)
	_, _ = c.CancelTask(ctx, mcp.CancelTaskRequest{})
	_, _ = c.WaitForTask(ctx, "t", 0)
	_ = errors.Is(err, client.ErrInvalidFallbackPollInterval)
	_ = errors.Is(err, client.ErrServerPollIntervalOverflow)
	_, _ = c.GetTask(ctx, mcp.GetTaskRequest{}) // still valid: not flagged
}
