package taskkit

import (
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// HasTaskParams reports whether the client asked for task execution.
func HasTaskParams(req mcp.CallToolRequest) bool {
	return req.Params.Task != nil // want MCP005
}

// TaskTTL returns the retention the client asked for, or def.
func TaskTTL(req mcp.CallToolRequest, def time.Duration) time.Duration {
	p := req.Params.Task          // want MCP005
	if p == nil || p.TTL == nil { // want MCP005
		return def
	}
	return time.Duration(*p.TTL) * time.Millisecond // want MCP005
}
