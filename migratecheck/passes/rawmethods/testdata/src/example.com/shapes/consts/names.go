package consts

// Unexported dispatch constants, declared here and used in dispatch.go.
const (
	methodTasksList   = "tasks/list"                 // want `^MCP002: methodTasksList \(= "tasks/list"\) is used as a JSON-RPC method`
	methodTaskStatus  = "notifications/tasks/status" // want `^MCP003: methodTaskStatus \(= "notifications/tasks/status"\) is used as a`
	methodTasksCancel = "tasks/cancel"
)
