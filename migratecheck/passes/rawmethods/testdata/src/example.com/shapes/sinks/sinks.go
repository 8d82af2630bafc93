// Package sinks calls user-defined helpers that take the JSON-RPC method
// name, in this package (any case) and in an imported one (facts).
package sinks // want `^note: the package still talks to 2025-11-25 peers \(it calls`

import "example.com/shapes/sinkhelper"

// T stands in for *testing.T.
type T struct{}

// rpcRequest is a test-style helper: its method parameter becomes the
// "method" key of the request it builds.
func rpcRequest(t *T, method string, params any) map[string]any {
	_ = t
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
}

type client struct{ conn *sinkhelper.Conn }

// call is lower-case; the configured call names match in any case.
func (c *client) call(method string, params any) error { return c.conn.Send(method, params) }

func sendRequest(c *sinkhelper.Conn, method string) error { return c.Send(method, nil) }

// poll reaches a sink through call.
func poll(c *client, id, method string) error {
	return c.call(method, map[string]any{"taskId": id})
}

func use(t *T, c *client) {
	_ = rpcRequest(t, "tasks/result", map[string]any{"taskId": "1"}) // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(passed as the`
	_ = c.call("tasks/list", nil)                                    // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(passed as the`
	_ = sendRequest(c.conn, "tasks/result")                          // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(passed as the`
	_ = poll(c, "1", "tasks/result")                                 // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(passed as the`
	_ = c.conn.Send("tasks/list", nil)                               // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(passed as the`
	_ = sinkhelper.Forward(c.conn, "tasks/result", "tasks/list")     // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(passed as the`
	_ = sinkhelper.Describe("tasks/result")                          // not a sink
	_ = rpcRequest(t, "tasks/get", nil)                              // unchanged method
}
