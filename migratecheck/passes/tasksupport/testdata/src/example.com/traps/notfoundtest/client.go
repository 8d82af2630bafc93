// Package notfoundtest has a test that asserts the removed methods answer
// METHOD_NOT_FOUND: it checks the migration, it does not depend on them.
package notfoundtest

// Response is a JSON-RPC response.
type Response struct {
	Error *struct{ Code int }
}

// Client sends requests.
type Client struct{}

// Call sends one request.
func (c *Client) Call(method string, params any) Response { return Response{} }
