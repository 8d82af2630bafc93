// Package wrapperuse uses the wrapper: aliases resolve to mcp-go objects,
// re-declared objects are found through reexport facts.
package wrapperuse // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

import (
	"example.com/wrapper"
)

func use(t wrapper.Task) {
	_ = t.TTL
	var e wrapper.ToolExecution
	_ = e.TaskSupport
	_ = wrapper.TaskSupportRequired
	_ = wrapper.EnableTasks(true, true, true)
	_ = wrapper.Tasks()
	_ = wrapper.NotAWrapper()
	_ = wrapper.MethodResult
}

func dispatch(method string) {
	switch method {
	case wrapper.MethodResult:
	}
}
