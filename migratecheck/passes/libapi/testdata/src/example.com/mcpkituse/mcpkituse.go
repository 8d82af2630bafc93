// Package mcpkituse uses every catalogued mcpkit *V1 identifier (positives)
// and mcpkit's modern API (negatives).
package mcpkituse

import (
	"example.com/std/context"

	"github.com/panyam/mcpkit/client"
	"github.com/panyam/mcpkit/core"
	"github.com/panyam/mcpkit/server"
)

func serverSide(srv *server.Server) {
	cfg := server.TasksConfigV1{Server: srv} // want `^MCP004: mcpkit server\.TasksConfigV1 registers mcpkit's 2025-11-25 \(V1\)` `^note: 2025-11-25 engine: mcpkit server\.TasksConfigV1`
	server.RegisterTasksV1(cfg)              // want `^MCP004: mcpkit server\.RegisterTasksV1 registers mcpkit's 2025-11-25 \(V1\)` `^note: 2025-11-25 engine: mcpkit server\.RegisterTasksV1`
}

func clientSide(ctx context.Context, c *client.Client) {
	_, _ = client.ToolCallAsTaskV1(ctx, c, "render", nil) // want `^MCP008: mcpkit client\.ToolCallAsTaskV1 calls a tool as a legacy task`
	var opts client.TaskCallOptionsV1                     // want `^MCP005: mcpkit client\.TaskCallOptionsV1 sets the removed per-request`
	_, _ = client.GetTaskV1(ctx, c, "t")                  // want `^MCP015: mcpkit client\.GetTaskV1 calls tasks/get and returns its legacy`
	_, _ = client.CancelTaskV1(ctx, c, "t")               // want `^MCP012: mcpkit client\.CancelTaskV1 expects tasks/cancel to return the`
	_, _ = client.WaitForTaskV1(ctx, c, "t", 0)           // want `^MCP001: mcpkit client\.WaitForTaskV1 uses the removed tasks/result`
	_, _ = client.GetTaskPayloadV1(ctx, c, "t")           // want `^MCP001: mcpkit client\.GetTaskPayloadV1 uses the removed tasks/result`
	_, _ = client.ListTasksV1(ctx, c)                     // want `^MCP002: mcpkit client\.ListTasksV1 calls the removed tasks/list method:`
	_ = opts

	// The modern (extension) API reuses unsuffixed names: not flagged.
	res, _ := client.ToolCall(ctx, c, "render", nil)
	_ = res.IsTask()
	_, _ = client.GetTask(ctx, c, "t")
	_ = client.CancelTask(ctx, c, "t")
	_, _ = client.WaitForTask(ctx, c, "t")
}

func coreTypes(ctx context.Context, t core.TaskInfo) {
	_ = t.TTL                             // want `^MCP006: mcpkit core\.TaskInfo\.TTL is the legacy Task field "ttl":`
	_ = t.PollInterval                    // want `^MCP007: mcpkit core\.TaskInfo\.PollInterval is the legacy Task field`
	_ = t.ParentTaskID                    // want `^MCP008: mcpkit core\.TaskInfo\.ParentTaskID is the legacy Task field`
	var a core.CreateTaskResultV1         // want `^MCP008: mcpkit core\.CreateTaskResultV1 is the nested 2025-11-25`
	var b core.GetTaskResultV1            // want `^MCP015: mcpkit core\.GetTaskResultV1 is the legacy tasks/get result: the`
	var d core.CancelTaskResultV1         // want `^MCP012: mcpkit core\.CancelTaskResultV1 is the legacy tasks/cancel result`
	var e core.ListTasksResultV1          // want `^MCP002: mcpkit core\.ListTasksResultV1 belongs to the removed tasks/list`
	var f core.TasksCap                   // want `^MCP004: mcpkit core\.TasksCap is the legacy capabilities\.tasks`
	var g core.ClientTasksCap             // want `^MCP004: mcpkit core\.ClientTasksCap is the legacy capabilities\.tasks`
	var h core.TasksCapMethod             // want `^MCP004: mcpkit core\.TasksCapMethod is the legacy capabilities\.tasks`
	var i core.TasksCapRequests           // want `^MCP004: mcpkit core\.TasksCapRequests is the legacy capabilities\.tasks`
	var j core.TasksCapToolsMethods       // want `^MCP004: mcpkit core\.TasksCapToolsMethods is the legacy`
	var k core.TasksCapSamplingMethods    // want `^MCP013: mcpkit core\.TasksCapSamplingMethods declares client-hosted`
	var l core.TasksCapElicitationMethods // want `^MCP013: mcpkit core\.TasksCapElicitationMethods declares client-hosted`
	_ = core.ClientSupportsTasksV1(ctx)   // want `^MCP004: mcpkit core\.ClientSupportsTasksV1 is the legacy`
	var sc core.ServerCapabilities
	_ = sc.Tasks // want `^MCP004: mcpkit core\.ServerCapabilities\.Tasks is the legacy`
	var cc core.ClientCapabilities
	_ = cc.Tasks // want `^MCP004: mcpkit core\.ClientCapabilities\.Tasks is the legacy`
	_, _, _, _, _, _, _, _, _, _, _ = a, b, d, e, f, g, h, i, j, k, l

	// Still used by the extension implementation: not flagged for mcpkit.
	_ = core.ToolExecution{TaskSupport: core.TaskSupportRequired}
	_ = core.ClientSupportsTasks(ctx)
	_ = core.TaskInfoV2{}
}
