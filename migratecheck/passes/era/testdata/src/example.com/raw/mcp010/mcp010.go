// Package mcp010 exercises MCP010: input_required handled next to tasks/result.
package mcp010 // want `^note: implements the tasks extension`

import (
	"example.com/std/context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func legacyLoop(ctx context.Context, c *client.Client, id string) {
	t, _ := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}})
	if t.Status == mcp.TaskStatusInputRequired {
		_, _ = c.TaskResult(ctx, mcp.TaskResultRequest{})
	}
}

type rpc struct{}

func (rpc) Call(ctx context.Context, method string, params, result any) error { return nil }

func rawLoop(ctx context.Context, r rpc, status string) {
	if status == "input_required" {
		_ = r.Call(ctx, "tasks/result", nil, nil)
	}
}

// Negative: input_required without tasks/result (the modern flow).
func modernLoop(ctx context.Context, r rpc, status string) {
	if status == string(mcp.TaskStatusInputRequired) {
		_ = r.Call(ctx, "tasks/update", nil, nil)
	}
}
