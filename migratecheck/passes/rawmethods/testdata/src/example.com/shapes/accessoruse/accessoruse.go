// Package accessoruse calls the helpers of example.com/shapes/accessor from
// another package: the facts carry the legacy read across.
package accessoruse // want `^note: the package still serves 2025-11-25 peers \(it uses the legacy task`

import (
	"example.com/shapes/accessor"

	"github.com/mark3labs/mcp-go/mcp"
)

func handle(req mcp.CallToolRequest) string {
	if accessor.HasTaskParams(req) {
		ttl, _ := accessor.ExtractTaskTTL(req)
		_ = ttl
	}
	return accessor.ToolName(req)
}
