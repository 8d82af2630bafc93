package agent

import (
	"context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Resume unblocks a task that waits for the user: on 2025-11-25 servers the
// pending elicitation arrives while tasks/result is outstanding.
func (a *Agent) Resume(ctx context.Context, t mcp.Task) (*mcp.TaskResultResult, error) { // want MCP001
	if t.Status != mcp.TaskStatusInputRequired { // want MCP010
		return nil, nil
	}
	return a.c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: t.TaskId}}) // want MCP001
}

// Page lists one page of tasks for the task picker.
func Page(ctx context.Context, c *client.Client, cursor mcp.Cursor) (*mcp.ListTasksResult, error) { // want MCP002
	req := mcp.ListTasksRequest{} // want MCP002
	req.Params.Cursor = cursor
	return c.ListTasksByPage(ctx, req) // want MCP002
}

// withRetention asks the server to keep the task for ttlMs.
func withRetention(req *mcp.CallToolRequest, ttlMs int64) {
	p := mcp.NewTaskParams(&ttlMs) // want MCP005
	req.Params.Task = &p           // want MCP005
}

var _ = withRetention
