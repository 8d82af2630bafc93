// Package client is a test stub of github.com/mark3labs/mcp-go/client.
package client

import (
	"example.com/std/context"
	"example.com/std/errors"
	"example.com/std/time"

	"github.com/mark3labs/mcp-go/mcp"
)

type Client struct{}

var (
	ErrRepeatedTaskListCursor      = errors.New("repeated task list cursor")
	ErrInvalidFallbackPollInterval = errors.New("invalid fallback poll interval")
	ErrServerPollIntervalOverflow  = errors.New("server poll interval overflow")
)

func (c *Client) GetTask(ctx context.Context, r mcp.GetTaskRequest) (*mcp.GetTaskResult, error) {
	return nil, nil
}
func (c *Client) CancelTask(ctx context.Context, r mcp.CancelTaskRequest) (*mcp.CancelTaskResult, error) {
	return nil, nil
}
func (c *Client) ListTasks(ctx context.Context, r mcp.ListTasksRequest) (*mcp.ListTasksResult, error) {
	return nil, nil
}
func (c *Client) ListTasksByPage(ctx context.Context, r mcp.ListTasksRequest) (*mcp.ListTasksResult, error) {
	return nil, nil
}
func (c *Client) TaskResult(ctx context.Context, r mcp.TaskResultRequest) (*mcp.TaskResultResult, error) {
	return nil, nil
}
func (c *Client) WaitForTask(ctx context.Context, taskID string, fallback time.Duration) (*mcp.GetTaskResult, error) {
	return nil, nil
}
func (c *Client) CallTool(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, nil
}
