// Package raw advertises the extension with go-sdk while dispatching
// tasks/result itself (MCP014).
package raw // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const tasksExt = "io.modelcontextprotocol/tasks"

func caps() *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{}
	c.AddExtension(tasksExt, nil)
	return c
}

func handle(method string) any {
	switch method {
	case "tasks/result": // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(in a method`
		return nil
	}
	return nil
}
