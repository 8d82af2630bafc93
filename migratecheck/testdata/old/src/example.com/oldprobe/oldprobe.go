// Package oldprobe uses mcp-go v0.47.0: messages must say the extension APIs
// are missing (feature probe).
package oldprobe

import (
	"example.com/std/context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func New() *server.MCPServer {
	return server.NewMCPServer("s", "1",
		server.WithTaskCapabilities(false, true, true)) // want `this mcp-go \(go.mod requires v0.47.0\) predates the extension APIs \(no server.WithExtensions\): upgrade to v1.0.0 or later`
}

func poll(ctx context.Context, c *client.Client) {
	_, _ = c.TaskResult(ctx, mcp.TaskResultRequest{}) // want `this mcp-go \(go.mod requires v0.47.0\) has no client.WaitForTask \(added in v1.0.0\), so loop client.GetTask`
}
