// Package accessor is an SDK-level helper layer around mcp-go's per-request
// task params.
package accessor

import "github.com/mark3labs/mcp-go/mcp"

// HasTaskParams reports whether the caller asked for task augmentation.
func HasTaskParams(req mcp.CallToolRequest) bool {
	return req.Params.Task != nil // want `^MCP005: mcp-go mcp\.CallToolParams\.Task is the removed per-request`
}

// ExtractTaskTTL returns the requested TTL, if any.
func ExtractTaskTTL(req mcp.CallToolRequest) (int64, bool) {
	if !HasTaskParams(req) { // want `^MCP005: accessor\.HasTaskParams \(which reads mcp-go`
		return 0, false
	}
	ttl := req.Params.Task.TTL // want `^MCP005: mcp-go mcp\.CallToolParams\.Task is the removed per-request`
	if ttl == nil {
		return 0, false
	}
	return *ttl, true
}

// taskTTL chains through another accessor.
func taskTTL(req mcp.CallToolRequest) int64 {
	v, _ := ExtractTaskTTL(req) // want `^MCP005: accessor\.ExtractTaskTTL \(which reads mcp-go mcp\.TaskParams\.TTL\)`
	return v
}

// ToolName reads an unrelated field: not an accessor.
func ToolName(req mcp.CallToolRequest) string { return req.Params.Name }

var _ = taskTTL
