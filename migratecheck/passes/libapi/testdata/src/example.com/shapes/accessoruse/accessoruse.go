// Package accessoruse calls the helpers of example.com/shapes/accessor from
// another package: the facts carry the legacy read across.
package accessoruse

import (
	"example.com/shapes/accessor"

	"github.com/mark3labs/mcp-go/mcp"
)

func handle(req mcp.CallToolRequest) string {
	if accessor.HasTaskParams(req) { // want `^MCP005: accessor\.HasTaskParams \(which reads mcp-go`
		ttl, _ := accessor.ExtractTaskTTL(req) // want `^MCP005: accessor\.ExtractTaskTTL \(which reads mcp-go mcp\.TaskParams\.TTL\)`
		_ = ttl
	}
	return accessor.ToolName(req)
}
