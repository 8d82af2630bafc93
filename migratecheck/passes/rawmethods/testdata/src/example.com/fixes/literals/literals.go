// Package literals emits the legacy status notification; the opt-in fix
// renames the raw literal.
package literals

import "example.com/std/context"

type conn struct{}

func (conn) Notify(ctx context.Context, method string, params any) error { return nil }

const statusMethod = `notifications/tasks/status` // want "^MCP003: statusMethod \\(= `notifications/tasks/status`\\) is used as a"

func emit(ctx context.Context, c conn, id string) {
	_ = c.Notify(ctx, "notifications/tasks/status", map[string]any{"taskId": id}) // want `^MCP003: "notifications/tasks/status" is used as a JSON-RPC method name`
	_ = c.Notify(ctx, statusMethod, nil)
}
