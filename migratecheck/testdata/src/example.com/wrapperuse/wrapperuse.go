// Package wrapperuse uses the wrapper: aliases resolve to mcp-go objects,
// re-declared objects are found through reexport facts.
package wrapperuse

import (
	"example.com/wrapper"
)

func use(t wrapper.Task) {
	_ = t.TTL                                 // want `mcp-go mcp.Task.TTL is the legacy Task field "ttl"`
	var e wrapper.ToolExecution               // want `mcp-go mcp.ToolExecution declares the removed tool execution.taskSupport`
	_ = e.TaskSupport                         // want `mcp.ToolExecution.TaskSupport is read here`
	_ = wrapper.TaskSupportRequired           // want `wrapper.TaskSupportRequired \(which re-exports mcp-go mcp.TaskSupportRequired\) declares`
	_ = wrapper.EnableTasks(true, true, true) // want `wrapper.EnableTasks \(which re-exports mcp-go server.WithTaskCapabilities\) enables` `wrapper.EnableTasks.*\(list=true, …\) serves the removed tasks/list method`
	_ = wrapper.Tasks()                       // want `wrapper.Tasks \(which re-exports mcp-go server.WithTaskCapabilities\) enables`
	_ = wrapper.NotAWrapper()
	_ = wrapper.MethodResult // want `wrapper.MethodResult \(which re-exports mcp-go mcp.MethodTasksResult\) names the removed method`
}

func dispatch(method string) {
	switch method {
	case wrapper.MethodResult: // want `wrapper.MethodResult \(which re-exports`
	}
}
