// Package usewrap uses the legacy API only through package wrap.
package usewrap

import (
	"github.com/mark3labs/mcp-go/server"

	"example.com/migratecheck-e2e/wrap"
)

// New builds a server through the wrapper.
func New() *server.MCPServer {
	return server.NewMCPServer("wrapped", "1.0.0", wrap.Tasks())
}

// Support is the wrapped task support level.
var Support = wrap.Required
