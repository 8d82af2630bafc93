// Package dualclient already serves both eras: it asks for the result with
// tasks/result only when the session negotiated 2025-11-25 (a note), and a
// function without such a branch is still an error.
package dualclient // want `^note: the package still talks to 2025-11-25 peers \(it calls`

type session struct{ version string }

func (s *session) isModernProtocol() bool { return s.version >= "2026-07-28" }

type conn struct{}

func (conn) Call(method string, params any) error { return nil }

func result(s *session, c conn, id string) error {
	if s.isModernProtocol() {
		return c.Call("tasks/get", map[string]any{"taskId": id})
	}
	return c.Call("tasks/result", map[string]any{"taskId": id}) // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(passed as the`
}

func list(c conn) error {
	return c.Call("tasks/list", nil) // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(passed as the`
}
