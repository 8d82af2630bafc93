package proxy

// JSON-RPC methods the gateway routes itself instead of passing through.
const (
	methodInitialize  = "initialize"
	methodToolsCall   = "tools/call"
	methodTasksGet    = "tasks/get"
	methodTasksResult = "tasks/result" // want MCP001
	methodTasksCancel = "tasks/cancel"

	notifyTaskStatus = "notifications/tasks/status" // want MCP003
)
