// Package sinkhelper wraps a JSON-RPC connection: its functions take the
// method name as a parameter, so they become method sinks for importers.
package sinkhelper

// Request is a JSON-RPC request.
type Request struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// Conn sends requests.
type Conn struct{ out []Request }

// Send builds the request from the method parameter (a sink).
func (c *Conn) Send(method string, params any) error {
	c.out = append(c.out, Request{JSONRPC: "2.0", Method: method, Params: params})
	return nil
}

// Forward passes its second string parameter on to Send (a sink through a
// sink).
func Forward(c *Conn, label, method string) error {
	_ = label
	return c.Send(method, nil)
}

// Describe only formats its parameter: not a sink.
func Describe(method string) string { return "method " + method }
