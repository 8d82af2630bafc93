// Package legacy uses mcp-go's 2025-11-25 experimental tasks API, which the
// io.modelcontextprotocol/tasks extension removed or changed.
package legacy

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// NewServer enables mcp-go's legacy task engine.
func NewServer() *server.MCPServer {
	s := server.NewMCPServer("legacy", "1.0.0",
		server.WithTaskCapabilities(true, true, true),
	)
	s.AddTaskTool(mcp.NewTool("slow", mcp.WithTaskSupport(mcp.TaskSupportRequired)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			return &mcp.CreateTaskResult{}, nil
		})
	return s
}
