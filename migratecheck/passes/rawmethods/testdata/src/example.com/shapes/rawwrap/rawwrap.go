// Package rawwrap wraps the removed methods behind functions of its own.
package rawwrap // want `^note: the package still talks to 2025-11-25 peers \(it calls`

// Client sends JSON-RPC requests.
type Client struct{}

// Call sends one request.
func (c *Client) Call(method string, params any) error { return nil }

// Results fetches a task's result the 2025-11-25 way.
func Results(c *Client, id string) error {
	return c.Call("tasks/result", map[string]string{"taskId": id}) // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(passed as the`
}

func refresh(c *Client) error {
	return Results(c, "t1") // want `^MCP001: calls Results, which sends "tasks/result" as a JSON-RPC method,`
}
