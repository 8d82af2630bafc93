package taskkit

import "github.com/mark3labs/mcp-go/mcp"

// Capabilities returns the task capability for the negotiated protocol
// version: the extension for 2026-07-28 sessions, the 2025-11-25
// capabilities.tasks otherwise. Router serves the 2025-11-25 methods to
// every session, so the extension is advertised without an engine for it.
func Capabilities(protocolVersion string) map[string]any {
	if mcp.IsModernProtocol(protocolVersion) {
		return map[string]any{
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}, // want MCP014
		}
	}
	return map[string]any{
		"tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{}}, // want MCP004:info
	}
}
