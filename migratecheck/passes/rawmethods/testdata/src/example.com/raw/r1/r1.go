// Package r1 exercises rule R1: legacy method names in JSON-RPC method
// position (positives) and the false-positive traps (negatives).
package r1 // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

import (
	"example.com/std/context"
	"example.com/std/errors"
	"example.com/std/fmt"

	"example.com/raw/httpstub"
	"example.com/raw/protocol"
)

type rpc struct{}

func (rpc) Call(ctx context.Context, method string, params, result any) error  { return nil }
func (rpc) Notify(ctx context.Context, method string, params any) error        { return nil }
func (rpc) HandleMethod(method string, h func())                               {}
func (rpc) SendNotificationToClient(ctx context.Context, method string, p any) {}
func (rpc) Invoke(method string) error                                         { return nil }

const methodTasksList = "tasks/list" // want `^MCP002: methodTasksList \(= "tasks/list"\) is used as a JSON-RPC method`

const methodUnused = "tasks/result" // declared but never used as a method: not reported

var errMethodNotFound = errors.New("method not found")

// Position 1: a Method field and a "method" map key.
func build() []any {
	return []any{
		protocol.Request{JSONRPC: "2.0", Method: "tasks/result"}, // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(as a method`
		map[string]any{"jsonrpc": "2.0", "method": "tasks/list"}, // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(as a method`
		map[string]any{"method": "notifications/tasks/status"},   // want `^MCP003: "notifications/tasks/status" is used as a JSON-RPC method name`
	}
}

func assign(req *protocol.Request, m map[string]any) {
	req.Method = "tasks/result" // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(assigned to a`
	m["method"] = "tasks/list"  // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(assigned to a`
}

// Position 2 and 3: dispatch on the method name.
func dispatch(req protocol.Request) (any, error) {
	switch req.Method {
	case "tasks/get":
		return nil, nil
	case "tasks/result": // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(in a method`
		return nil, nil
	case methodTasksList:
		return nil, nil
	}
	switch method := req.Method; method {
	case protocol.MethodTasksResult: // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(in a method`
		return nil, nil
	}
	if req.Method == methodTasksList {
		return nil, nil
	}
	if "tasks/result" != req.Method { // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(compared with`
		return nil, nil
	}
	return nil, nil
}

// Position 4: the method argument of well-known call names.
func calls(ctx context.Context, c rpc) {
	_ = c.Call(ctx, "tasks/result", nil, nil)                          // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(passed as the`
	_ = c.Notify(ctx, "notifications/tasks/status", nil)               // want `^MCP003: "notifications/tasks/status" is used as a JSON-RPC method name`
	c.HandleMethod("tasks/list", func() {})                            // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(registered as a`
	c.SendNotificationToClient(ctx, "notifications/tasks/status", nil) // want `^MCP003: "notifications/tasks/status" is used as a JSON-RPC method name`
	_ = c.Invoke("tasks/result")                                       // not in the default call-name list
}

// Negatives: the compliance exemption (rejecting the old methods).
func reject(req protocol.Request) (any, error) {
	switch req.Method {
	case "tasks/result", "tasks/list":
		return nil, errMethodNotFound
	case "notifications/tasks/status":
		return nil, fmt.Errorf("code %d", -32601)
	}
	if req.Method == "tasks/result" {
		return nil, &rpcError{Code: httpstub.StatusNotFound}
	}
	return nil, nil
}

// removed answers the removed methods with -32601 (inverted guard).
func removed(req protocol.Request) error {
	if req.Method != "tasks/result" && req.Method != "tasks/list" {
		return nil
	}
	count++
	return errMethodNotFound
}

var count int

// handled is not a rejection: the rest of the function serves the method.
func handled(req protocol.Request) error {
	if req.Method != "tasks/result" { // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(compared with`
		return nil
	}
	count++
	if count > 3 {
		return errMethodNotFound
	}
	count--
	count++
	return nil
}

type rpcError struct{ Code int }

func (e *rpcError) Error() string { return "rpc error" }

// Negatives: literals that are not in method position.
func notMethods(t interface{ Fatalf(string, ...any) }) {
	t.Fatalf("tasks/result(%s) failed", "x")        // contains the name: not reported
	fmt.Printf("calling %s", "tasks/result")        // argument of a non-method call
	allow := []string{"tasks/result", "tasks/list"} // metrics allow-list
	labels := map[string]bool{"tasks/list": true}   // map key, not a method value
	_ = fmt.Sprint("tasks/result")
	_, _ = allow, labels
	// "tasks/result" in a comment is not reported
	var m protocol.Request
	m.Params = "tasks/result" // not the Method field
	_ = methodUnused
	_ = protocol.MethodTasksGet
}
