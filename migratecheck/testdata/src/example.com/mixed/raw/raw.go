// Package raw advertises the extension with go-sdk while dispatching
// tasks/result itself (MCP014).
package raw

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const tasksExt = "io.modelcontextprotocol/tasks"

func caps() *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{}
	c.AddExtension(tasksExt, nil) // want `this package advertises "io.modelcontextprotocol/tasks" but its task engine is the 2025-11-25 one \("tasks/result" served or emitted here\)`
	return c
}

func handle(method string) any {
	switch method {
	case "tasks/result": // want `"tasks/result" is used as a JSON-RPC method name \(in a method switch\)`
		return nil
	}
	return nil
}
