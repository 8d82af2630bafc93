// Package agent drives long-running MCP tools for a chat assistant: it starts
// a tool call as a task, waits for the result and cancels on user request.
package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Agent wraps one MCP client session.
type Agent struct {
	c       *client.Client
	ttl     time.Duration
	pending map[string]string // task ID → tool name
}

// New returns an Agent that keeps tasks for ttl on the server.
func New(c *client.Client, ttl time.Duration) *Agent {
	return &Agent{c: c, ttl: ttl, pending: map[string]string{}}
}

// Start calls a tool as a task and remembers the task ID.
func (a *Agent) Start(ctx context.Context, tool string, args map[string]any) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	ttl := a.ttl.Milliseconds()
	req.Params.Task = &mcp.TaskParams{TTL: &ttl} // want MCP005
	res, err := a.c.CallTool(ctx, req)
	if err != nil {
		return "", fmt.Errorf("call %s: %w", tool, err)
	}
	if res.IsError {
		return "", errors.New("tool refused the call")
	}
	id := taskIDFrom(res)
	a.pending[id] = tool
	return id, nil
}

func taskIDFrom(res *mcp.CallToolResult) string {
	if res.Meta != nil {
		if v, ok := res.Meta.AdditionalFields["taskId"].(string); ok {
			return v
		}
	}
	return ""
}

// Await blocks until the task is finished and returns its text output.
func (a *Agent) Await(ctx context.Context, id string) (string, error) {
	res, err := a.c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}}) // want MCP001
	if err != nil {
		return "", err
	}
	delete(a.pending, id)
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			return t.Text, nil
		}
	}
	return "", nil
}

// Cancel stops a task and reports the status the server answered with.
func (a *Agent) Cancel(ctx context.Context, id string) (mcp.TaskStatus, error) {
	res, err := a.c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: id}}) // want MCP012
	if err != nil {
		return "", err
	}
	return res.Status, nil
}
