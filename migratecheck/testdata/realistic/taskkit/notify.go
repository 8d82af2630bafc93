package taskkit

import "github.com/mark3labs/mcp-go/mcp"

// StatusNotification builds the status push for a changed task.
func StatusNotification(t Task) mcp.JSONRPCNotification {
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION}
	n.Method = mcp.MethodNotificationTasksStatus // want MCP003
	n.Params.AdditionalFields = map[string]any{"taskId": t.TaskID, "status": t.Status}
	return n
}
