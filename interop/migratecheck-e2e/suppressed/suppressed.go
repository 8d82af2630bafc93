// Package suppressed exercises suppression directives: one finding is
// silenced with a reason, and one directive matches nothing (MCP000).
package suppressed

import "github.com/mark3labs/mcp-go/mcp"

// Method is kept for 2025-11-25 peers.
var Method = mcp.MethodTasksResult //migrate-check:ignore MCP001 kept for 2025-11-25 peers until they upgrade

// Get is still valid in the extension, so the directive below is unused. In
// a doc comment gofmt writes "// migrate-check:…" with a space (a hyphenated
// name is not a Go directive); migrate-check accepts both spellings.
//
// migrate-check:ignore MCP002 nothing here uses tasks/list
var Get = mcp.MethodTasksGet
