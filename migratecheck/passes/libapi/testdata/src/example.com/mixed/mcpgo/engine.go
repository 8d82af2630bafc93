package mcpgo

import "github.com/mark3labs/mcp-go/server"

func engine() server.ServerOption {
	return server.WithTaskCapabilities(false, true, true) // want `^MCP004: mcp-go server\.WithTaskCapabilities enables mcp-go's 2025-11-25` `^note: 2025-11-25 engine: mcp-go server\.WithTaskCapabilities`
}
