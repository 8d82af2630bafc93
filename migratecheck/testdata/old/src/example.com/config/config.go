// Package config is analyzed with target=extension-only, MCP011 disabled and
// method-call-funcs=Invoke.
package config

import (
	"example.com/std/context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type rpc struct{}

func (rpc) Invoke(method string) error                           { return nil }
func (rpc) Call(ctx context.Context, method string, p any) error { return nil }

func use(ctx context.Context, r rpc) {
	_ = server.WithTaskCapabilities(false, true, true) // want `server.WithTaskCapabilities enables mcp-go's 2025-11-25 task engine.*before declaring the extension$`
	var caps mcp.ServerCapabilities
	_ = caps.Tasks // want `mcp.ServerCapabilities.Tasks is the legacy capabilities.tasks slot.*extension$`
	//migrate-check:ignore MCP011 disabled rule: not reported as unused
	_ = mcp.WithRelatedTask("t")
	_ = r.Invoke("tasks/result")         // want `"tasks/result" is used as a JSON-RPC method name \(passed as the method to Invoke\)`
	_ = r.Call(ctx, "tasks/result", nil) // Call is not in the configured list
}
