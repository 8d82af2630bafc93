package mcpgo

import "github.com/mark3labs/mcp-go/server"

func engine() server.ServerOption {
	return server.WithTaskCapabilities(false, true, true) // want `server.WithTaskCapabilities enables mcp-go's 2025-11-25 task engine`
}
