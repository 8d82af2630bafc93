// Package admin is a CLI that only calls kit's router: it neither
// advertises nor implements an engine, so kit's advertisement is not its
// MCP014 (its own legacy call is still MCP002).
package admin // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

import "example.com/mixed/delegate/kit"

func drain(r *kit.Router) (any, error) {
	return r.Handle("tasks/list", nil) // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(registered as a`
}
