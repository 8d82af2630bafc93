// Package tables: a method name reaches a JSON-RPC position through a
// map of canned replies that a fake server looks up by the received method
// (see fake.go), and through helpers calling helpers (the shape of a test file).
package tables

type request struct {
	Method string
	Params any
}

// send is the package's one request builder.
func send(method string, params any) request {
	return request{Method: method, Params: params}
}
