// Package tmcuse uses every catalogued tmc/mcp identifier.
package tmcuse

import "github.com/tmc/mcp"

func use(t mcp.TaskInfo) {
	_ = mcp.MethodTasksResult   // want `tmc/mcp mcp.MethodTasksResult names the removed method "tasks/result"`
	_ = mcp.MethodTasksList     // want `tmc/mcp mcp.MethodTasksList names the removed method "tasks/list"`
	_ = mcp.MethodTasksStatus   // want `tmc/mcp mcp.MethodTasksStatus names the legacy notification`
	_ = mcp.MethodTasksGet      // unchanged: not flagged
	var lq mcp.ListTasksRequest // want `mcp.ListTasksRequest belongs to the removed tasks/list method`
	var lr mcp.ListTasksResult  // want `mcp.ListTasksResult belongs`
	_ = t.TTL                   // want `mcp.TaskInfo.TTL is the legacy Task field "ttl"`
	_ = t.PollInterval          // want `mcp.TaskInfo.PollInterval is the legacy Task field "pollInterval"`
	var cc mcp.ClientCapabilities
	_ = cc.Tasks // want `mcp.ClientCapabilities.Tasks is the legacy capabilities.tasks slot`
	var sc mcp.ServerCapabilities
	_ = sc.Tasks                // want `mcp.ServerCapabilities.Tasks is the legacy capabilities.tasks slot`
	_ = mcp.GetTaskRequest{}    // not flagged
	_ = mcp.CancelTaskRequest{} // not flagged
	_, _ = lq, lr
}
