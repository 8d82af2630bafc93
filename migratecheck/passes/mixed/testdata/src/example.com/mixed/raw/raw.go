// Package raw advertises the extension with go-sdk while dispatching
// tasks/result itself (MCP014).
package raw

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const tasksExt = "io.modelcontextprotocol/tasks"

func caps() *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{}
	c.AddExtension(tasksExt, nil) // want `^MCP014: this package advertises "io\.modelcontextprotocol/tasks" but its`
	return c
}

func handle(method string) any {
	switch method {
	case "tasks/result":
		return nil
	}
	return nil
}
