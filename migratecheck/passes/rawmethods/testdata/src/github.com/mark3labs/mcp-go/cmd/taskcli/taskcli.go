// Package taskcli is a CLI that lives under the library's import path: it is
// a user of the legacy API like any other and must migrate too.
package taskcli // want `^note: the package still talks to 2025-11-25 peers \(it calls`

import (
	"example.com/std/context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

type rawConn struct{}

func (rawConn) Call(method string, params any) error { return nil }

func wait(ctx context.Context, c *client.Client, id string) error {
	_, err := c.TaskResult(ctx, mcp.TaskResultRequest{})
	return err
}

func list(r rawConn) error {
	return r.Call("tasks/list", nil) // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(passed as the`
}
