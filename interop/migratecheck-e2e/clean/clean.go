// Package clean uses mcp-go without any legacy task API: migrate-check must
// report nothing here.
package clean

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// New builds a server with one ordinary tool.
func New() *server.MCPServer {
	s := server.NewMCPServer("clean", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("echo the input")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	return s
}

// Record is task-shaped storage that is not an MCP wire type: the "tasks"
// words here must not be flagged.
type Record struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// Methods lists names that are still valid in the tasks extension.
var Methods = []string{string(mcp.MethodTasksGet), string(mcp.MethodTasksCancel)}
