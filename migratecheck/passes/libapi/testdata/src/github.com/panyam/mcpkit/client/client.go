// Package client is a test stub of github.com/panyam/mcpkit/client.
package client

import (
	"example.com/std/context"
	"example.com/std/time"

	"github.com/panyam/mcpkit/core"
)

type Client struct{}

type TaskCallOptionsV1 struct {
	TTL *int
}

type ToolCallResult struct{}

func (r *ToolCallResult) IsTask() bool { return false }

type WaitOptions struct{}

func ToolCallAsTaskV1(ctx context.Context, c *Client, name string, args any, opts ...*TaskCallOptionsV1) (*core.CreateTaskResultV1, error) { // want `^MCP008: mcpkit core\.CreateTaskResultV1 is the nested 2025-11-25`
	return nil, nil
}
func GetTaskV1(ctx context.Context, c *Client, id string) (*core.GetTaskResultV1, error) { // want `^MCP015: mcpkit core\.GetTaskResultV1 is the legacy tasks/get result: the`
	return nil, nil
}
func CancelTaskV1(ctx context.Context, c *Client, id string) (*core.CancelTaskResultV1, error) { // want `^MCP012: mcpkit core\.CancelTaskResultV1 is the legacy tasks/cancel result`
	return nil, nil
}
func WaitForTaskV1(ctx context.Context, c *Client, id string, poll time.Duration) (*core.GetTaskResultV1, error) { // want `^MCP015: mcpkit core\.GetTaskResultV1 is the legacy tasks/get result: the`
	return nil, nil
}
func GetTaskPayloadV1(ctx context.Context, c *Client, id string) (any, error) { return nil, nil }
func ListTasksV1(ctx context.Context, c *Client) (*core.ListTasksResultV1, error) { // want `^MCP002: mcpkit core\.ListTasksResultV1 belongs to the removed tasks/list`
	return nil, nil
}

// Modern (extension) API: unsuffixed names, not flagged.
func ToolCall(ctx context.Context, c *Client, name string, args any) (*ToolCallResult, error) {
	return nil, nil
}
func GetTask(ctx context.Context, c *Client, id string) (*core.DetailedTask, error) { return nil, nil }
func CancelTask(ctx context.Context, c *Client, id string) error                    { return nil }
func WaitForTask(ctx context.Context, c *Client, id string, opts ...WaitOptions) (*core.DetailedTask, error) {
	return nil, nil
}
