// Package wrapperuse uses the wrapper: aliases resolve to mcp-go objects,
// re-declared objects are found through reexport facts.
package wrapperuse

import (
	"example.com/wrapper"
)

func use(t wrapper.Task) {
	_ = t.TTL                                 // want `^MCP006: mcp-go mcp\.Task\.TTL is the legacy Task field "ttl": the`
	var e wrapper.ToolExecution               // want `^MCP009: mcp-go mcp\.ToolExecution declares the removed tool`
	_ = e.TaskSupport                         // want `^MCP009: mcp-go mcp\.ToolExecution\.TaskSupport is read here; it holds the`
	_ = wrapper.TaskSupportRequired           // want `^MCP009: wrapper\.TaskSupportRequired \(which re-exports mcp-go`
	_ = wrapper.EnableTasks(true, true, true) // want `^MCP004: wrapper\.EnableTasks \(which re-exports mcp-go` `^MCP002: wrapper\.EnableTasks \(which re-exports mcp-go` `^note: 2025-11-25 engine: mcp-go server\.WithTaskCapabilities`
	_ = wrapper.Tasks()                       // want `^MCP004: wrapper\.Tasks \(which re-exports mcp-go` `^note: 2025-11-25 engine: mcp-go server\.WithTaskCapabilities`
	_ = wrapper.NotAWrapper()
	_ = wrapper.MethodResult // want `^MCP001: wrapper\.MethodResult \(which re-exports mcp-go`
}

func dispatch(method string) {
	switch method {
	case wrapper.MethodResult: // want `^MCP001: wrapper\.MethodResult \(which re-exports mcp-go`
	}
}
