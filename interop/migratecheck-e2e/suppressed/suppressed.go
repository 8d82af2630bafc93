// Package suppressed exercises suppression directives: one finding is
// silenced with a reason, and one directive matches nothing (MCP000).
package suppressed

import "github.com/mark3labs/mcp-go/mcp"

// Method is kept for 2025-11-25 peers.
//
//migrate-check:ignore MCP001 kept for 2025-11-25 peers until they upgrade
var Method = mcp.MethodTasksResult

// Get is still valid in the extension, so the directive below is unused.
//
//migrate-check:ignore MCP002 nothing here uses tasks/list
var Get = mcp.MethodTasksGet
