// Package client is a test stub of github.com/mark3labs/mcp-go/client v0.47.0
// (no WaitForTask).
package client

import (
	"example.com/std/context"

	"github.com/mark3labs/mcp-go/mcp"
)

type Client struct{}

func (c *Client) TaskResult(ctx context.Context, r mcp.TaskResultRequest) (*mcp.TaskResultResult, error) {
	return nil, nil
}
