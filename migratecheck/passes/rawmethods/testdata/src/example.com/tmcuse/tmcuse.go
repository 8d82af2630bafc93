// Package tmcuse uses every catalogued tmc/mcp identifier.
package tmcuse // want `^note: the package still serves 2025-11-25 peers \(it uses the legacy task`

import "github.com/tmc/mcp"

func use(t mcp.TaskInfo) {
	_ = mcp.MethodTasksResult
	_ = mcp.MethodTasksList
	_ = mcp.MethodTasksStatus
	_ = mcp.MethodTasksGet // unchanged: not flagged
	var lq mcp.ListTasksRequest
	var lr mcp.ListTasksResult
	_ = t.TTL
	_ = t.PollInterval
	var cc mcp.ClientCapabilities
	_ = cc.Tasks
	var sc mcp.ServerCapabilities
	_ = sc.Tasks
	_ = mcp.GetTaskRequest{}    // not flagged
	_ = mcp.CancelTaskRequest{} // not flagged
	_, _ = lq, lr
}
