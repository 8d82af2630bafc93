// Package literals emits the legacy status notification; the opt-in fix
// renames the raw literal.
package literals

import "example.com/std/context"

type conn struct{}

func (conn) Notify(ctx context.Context, method string, params any) error { return nil }

const statusMethod = `notifications/tasks/status` // want `statusMethod \(= .notifications/tasks/status.\) is used as a JSON-RPC method name once`

func emit(ctx context.Context, c conn, id string) {
	_ = c.Notify(ctx, "notifications/tasks/status", map[string]any{"taskId": id}) // want `"notifications/tasks/status" is used as a JSON-RPC method name \(passed as the method to Notify\)`
	_ = c.Notify(ctx, statusMethod, nil)
}
