package mcpgo

import "github.com/mark3labs/mcp-go/server"

func engine() server.ServerOption {
	return server.WithTaskCapabilities(false, true, true)
}
