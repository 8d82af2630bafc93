// Package dualemit sends both notification names (a dual-emit path): the
// legacy literal is reported but not renamed.
package dualemit

import "example.com/std/context"

type conn struct{}

func (conn) Notify(ctx context.Context, method string, params any) error { return nil }

func emit(ctx context.Context, c conn, legacy bool) {
	if legacy {
		_ = c.Notify(ctx, "notifications/tasks/status", nil) // want `^MCP003: "notifications/tasks/status" is used as a JSON-RPC method name`
		return
	}
	_ = c.Notify(ctx, "notifications/tasks", nil)
}
