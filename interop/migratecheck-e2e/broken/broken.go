// Package broken does not type-check: migrate-check must exit 1.
package broken

import "github.com/mark3labs/mcp-go/mcp"

// Bad assigns a string to an int.
var Bad int = mcp.NewTool("x").Name
