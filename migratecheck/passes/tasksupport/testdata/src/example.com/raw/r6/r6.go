// Package r6 exercises rule R6: execution.taskSupport.
package r6

type Support string

const (
	SupportForbidden Support = "forbidden"
	SupportOptional  Support = "optional"
	SupportRequired  Support = "required"
)

type Tool struct {
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	InputSchema any        `json:"inputSchema"`
	Execution   *execution `json:"execution,omitempty"`
	TaskSupport string     `json:"taskSupport,omitempty"` // want `^MCP009: Tool declares the tool field "taskSupport":`
}

type execution struct {
	TaskSupport string `json:"taskSupport,omitempty"` // want `^MCP009: execution declares the tool field "taskSupport":`
}

type opts struct {
	Mode Support `json:"taskSupport"` // want `^MCP009: opts declares the tool field "taskSupport":`
}

func toolJSON() map[string]any {
	return map[string]any{
		"name":        "render",
		"inputSchema": map[string]any{"type": "object"},
		"execution":   map[string]any{"taskSupport": "optional"}, // want `^MCP009: tool "execution": \{"taskSupport": …\} declares the removed task`
	}
}

// Negatives.

// manifest hashes a tool's task support for signing (seen in real code).
type manifest struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	TaskSupport string `json:"taskSupport"`
	Digest      string `json:"digest"`
}

func notExecution() map[string]any {
	return map[string]any{"taskSupport": "optional"}
}

var _ = []any{manifest{}, opts{}}
