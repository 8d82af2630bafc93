package consts

// Unexported dispatch constants, declared here and used in dispatch.go.
const (
	methodTasksList   = "tasks/list"                 // want `methodTasksList \(= "tasks/list"\) is used as a JSON-RPC method name 2 times`
	methodTaskStatus  = "notifications/tasks/status" // want `methodTaskStatus \(= "notifications/tasks/status"\) is used as a JSON-RPC method name once`
	methodTasksCancel = "tasks/cancel"
)
