// Package engine is a catalogued library's own task engine: it is analysed
// like any code. Its legacy-only dispatch is reported; the function that
// branches on the negotiated version already serves both eras (a note); and
// no opt-in fix touches its wire types or its status notification, because
// the package still serves 2025-11-25 peers.
package engine // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

import finemcp "github.com/finemcp/finemcp"

const (
	methodTasksResult = "tasks/result"               // want `^MCP001: methodTasksResult \(= "tasks/result"\) is used as a JSON-RPC`
	methodStatus      = "notifications/tasks/status" // want `^MCP003: methodStatus \(= "notifications/tasks/status"\) is used as a`
)

type task struct {
	TaskID       string `json:"taskId"`
	Status       string `json:"status"`
	CreatedAt    string `json:"createdAt"`
	TTL          *int64 `json:"ttl"`
	PollInterval *int64 `json:"pollInterval,omitempty"`
}

type notifier interface {
	Notify(method string, params any) error
}

type Engine struct{ out notifier }

// Dispatch is legacy-only.
func (e *Engine) Dispatch(method string) (any, error) {
	switch method {
	case methodTasksResult:
		return task{}, nil
	case finemcp.MethodTasksList:
		return nil, nil
	}
	return nil, nil
}

// Emit pushes the legacy status notification.
func (e *Engine) Emit(t task) error {
	return e.out.Notify("notifications/tasks/status", t) // want `^MCP003: "notifications/tasks/status" is used as a JSON-RPC method name`
}

// Serve branches on the negotiated protocol version: both eras are served.
func (e *Engine) Serve(protocolVersion, method string) (any, error) {
	if protocolVersion == "2025-11-25" {
		switch method {
		case "tasks/list": // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(in a method`
			return nil, nil
		}
		return nil, e.out.Notify(methodStatus, nil)
	}
	return nil, nil
}
