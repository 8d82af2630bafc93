// Package mcpgo advertises the tasks extension while enabling mcp-go's
// legacy task engine in another file (MCP014).
package mcpgo

import (
	"github.com/mark3labs/mcp-go/server"
)

// Claims 2026-07-28 compliance.
func New() *server.MCPServer {
	return server.NewMCPServer("s", "1",
		server.WithExtensions(map[string]any{
			"io.modelcontextprotocol/tasks": map[string]any{}, // want `^note: advertises the extension`
		}),
		engine(),
	)
}
