// Package tmcuse uses every catalogued tmc/mcp identifier.
package tmcuse

import "github.com/tmc/mcp"

func use(t mcp.TaskInfo) {
	_ = mcp.MethodTasksResult   // want `^MCP001: tmc/mcp mcp\.MethodTasksResult names the removed method`
	_ = mcp.MethodTasksList     // want `^MCP002: tmc/mcp mcp\.MethodTasksList names the removed method`
	_ = mcp.MethodTasksStatus   // want `^MCP003: tmc/mcp mcp\.MethodTasksStatus names the legacy notification`
	_ = mcp.MethodTasksGet      // unchanged: not flagged
	var lq mcp.ListTasksRequest // want `^MCP002: tmc/mcp mcp\.ListTasksRequest belongs to the removed tasks/list`
	var lr mcp.ListTasksResult  // want `^MCP002: tmc/mcp mcp\.ListTasksResult belongs to the removed tasks/list`
	_ = t.TTL                   // want `^MCP006: tmc/mcp mcp\.TaskInfo\.TTL is the legacy Task field "ttl": the`
	_ = t.PollInterval          // want `^MCP007: tmc/mcp mcp\.TaskInfo\.PollInterval is the legacy Task field`
	var cc mcp.ClientCapabilities
	_ = cc.Tasks // want `^MCP004: tmc/mcp mcp\.ClientCapabilities\.Tasks is the legacy`
	var sc mcp.ServerCapabilities
	_ = sc.Tasks                // want `^MCP004: tmc/mcp mcp\.ServerCapabilities\.Tasks is the legacy`
	_ = mcp.GetTaskRequest{}    // not flagged
	_ = mcp.CancelTaskRequest{} // not flagged
	_, _ = lq, lr
}
