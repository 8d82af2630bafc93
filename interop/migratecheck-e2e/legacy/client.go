package legacy

import (
	"context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Drain waits for a task the legacy way and then lists all tasks.
func Drain(ctx context.Context, c *client.Client, id string) error {
	var req mcp.TaskResultRequest
	req.Params.TaskId = id
	if _, err := c.TaskResult(ctx, req); err != nil {
		return err
	}
	_, err := c.ListTasks(ctx, mcp.ListTasksRequest{})
	return err
}
