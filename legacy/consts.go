package legacy

// ProtocolVersion is the only MCP version in which legacy tasks exist.
const ProtocolVersion = "2025-11-25"

// JSONRPCVersion is the value of every message's "jsonrpc" member.
const JSONRPCVersion = "2.0"

// Method names of the 2025-11-25 era that the task flows touch.
const (
	MethodInitialize            = "initialize"
	MethodInitialized           = "notifications/initialized"
	MethodPing                  = "ping"
	MethodToolsCall             = "tools/call"
	MethodToolsList             = "tools/list"
	MethodTasksGet              = "tasks/get"
	MethodTasksResult           = "tasks/result"
	MethodTasksList             = "tasks/list"
	MethodTasksCancel           = "tasks/cancel"
	MethodTaskStatus            = "notifications/tasks/status"
	MethodElicitationCreate     = "elicitation/create"
	MethodSamplingCreateMessage = "sampling/createMessage"
	MethodRootsList             = "roots/list"
	MethodCancelled             = "notifications/cancelled"
	MethodProgress              = "notifications/progress"
)

// _meta keys defined by the 2025-11-25 tasks specification.
const (
	// RelatedTaskKey holds {"taskId": ...} on every message related to a task
	// (L-32..L-34). Note the "io." prefix: SEP-1686's unprefixed key never shipped.
	RelatedTaskKey = "io.modelcontextprotocol/related-task"
	// ModelImmediateResponseKey is an optional string in CreateTaskResult._meta
	// that a host may show the model as an immediate tool result (L-23).
	ModelImmediateResponseKey = "io.modelcontextprotocol/model-immediate-response"
)
