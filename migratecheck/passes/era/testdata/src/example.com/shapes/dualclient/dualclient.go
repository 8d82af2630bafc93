// Package dualclient already serves both eras: it asks for the result with
// tasks/result only when the session negotiated 2025-11-25 (a note), and a
// function without such a branch is still an error.
package dualclient

type session struct{ version string }

func (s *session) isModernProtocol() bool { return s.version >= "2026-07-28" } // want `^note: isModernProtocol branches on the protocol version`

type conn struct{}

func (conn) Call(method string, params any) error { return nil }

func result(s *session, c conn, id string) error { // want `^note: result branches on the protocol version`
	if s.isModernProtocol() {
		return c.Call("tasks/get", map[string]any{"taskId": id})
	}
	return c.Call("tasks/result", map[string]any{"taskId": id})
}

func list(c conn) error {
	return c.Call("tasks/list", nil)
}
