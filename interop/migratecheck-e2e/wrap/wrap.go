// Package wrap re-exports mcp-go's legacy task API behind project names
// (as toolkits do): the declarations here are findings, and so are the
// uses in other packages, which migrate-check sees through analysis facts.
package wrap

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Required re-declares mcp.TaskSupportRequired.
const Required = mcp.TaskSupportRequired

// Tasks enables mcp-go's legacy task engine.
func Tasks() server.ServerOption { return server.WithTaskCapabilities(false, true, true) }
