package mcpgo // want `^note: the package still serves 2025-11-25 peers \(it configures mcp-go`

import "github.com/mark3labs/mcp-go/server"

func engine() server.ServerOption {
	return server.WithTaskCapabilities(false, true, true)
}
