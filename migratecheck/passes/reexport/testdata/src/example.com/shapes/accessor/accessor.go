// Package accessor is an SDK-level helper layer around mcp-go's per-request
// task params.
package accessor

import "github.com/mark3labs/mcp-go/mcp"

// HasTaskParams reports whether the caller asked for task augmentation.
func HasTaskParams(req mcp.CallToolRequest) bool { // want HasTaskParams:`^reads mcpgo:mcp\.CallToolParams\.Task`
	return req.Params.Task != nil
}

// ExtractTaskTTL returns the requested TTL, if any.
func ExtractTaskTTL(req mcp.CallToolRequest) (int64, bool) { // want ExtractTaskTTL:`^reads mcpgo:mcp\.TaskParams\.TTL`
	if !HasTaskParams(req) {
		return 0, false
	}
	ttl := req.Params.Task.TTL
	if ttl == nil {
		return 0, false
	}
	return *ttl, true
}

// taskTTL chains through another accessor.
func taskTTL(req mcp.CallToolRequest) int64 {
	v, _ := ExtractTaskTTL(req)
	return v
}

// ToolName reads an unrelated field: not an accessor.
func ToolName(req mcp.CallToolRequest) string { return req.Params.Name }

var _ = taskTTL
