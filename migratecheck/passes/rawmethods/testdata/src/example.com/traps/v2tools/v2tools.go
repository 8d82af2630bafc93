// Package v2tools is a 2026-07-28 server (it implements the extension) that
// still reads the tool's taskSupport, as mcpkit's v2 engine does: a tool
// that requires a task answers -32021 to clients without the extension.
package v2tools

type TaskSupport string

const (
	TaskSupportForbidden TaskSupport = "forbidden"
	TaskSupportOptional  TaskSupport = "optional"
	TaskSupportRequired  TaskSupport = "required"
)

type ToolExecution struct {
	TaskSupport TaskSupport `json:"taskSupport,omitempty"`
}

type Tool struct {
	Name        string         `json:"name"`
	InputSchema map[string]any `json:"inputSchema"`
	Execution   *ToolExecution `json:"execution,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

const codeMissingClientCapability = -32021

func call(tool Tool, clientHasExtension bool) (any, *rpcError) {
	if tool.Execution != nil && tool.Execution.TaskSupport == TaskSupportRequired && !clientHasExtension {
		return nil, &rpcError{Code: codeMissingClientCapability, Message: "this tool runs only as a task"}
	}
	return map[string]any{"resultType": "task", "taskId": "t1", "status": "working"}, nil
}
