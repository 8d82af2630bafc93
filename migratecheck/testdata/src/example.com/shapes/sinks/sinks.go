// Package sinks calls user-defined helpers that take the JSON-RPC method
// name, in this package (any case) and in an imported one (facts).
package sinks

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
	_ = rpcRequest(t, "tasks/result", map[string]any{"taskId": "1"}) // want `"tasks/result" is used as a JSON-RPC method name \(passed as the method to rpcRequest, which sends it as a JSON-RPC method\)`
	_ = c.call("tasks/list", nil)                                    // want `"tasks/list" is used as a JSON-RPC method name \(passed as the method to call\)`
	_ = sendRequest(c.conn, "tasks/result")                          // want `\(passed as the method to sendRequest\)`
	_ = poll(c, "1", "tasks/result")                                 // want `\(passed as the method to poll, which sends it`
	_ = c.conn.Send("tasks/list", nil)                               // want `\(passed as the method to Send, which sends it`
	_ = sinkhelper.Forward(c.conn, "tasks/result", "tasks/list")     // want `"tasks/list" is used as a JSON-RPC method name \(passed as the method to Forward`
	_ = sinkhelper.Describe("tasks/result")                          // not a sink
	_ = rpcRequest(t, "tasks/get", nil)                              // unchanged method
}
