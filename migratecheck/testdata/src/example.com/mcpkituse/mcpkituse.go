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
	cfg := server.TasksConfigV1{Server: srv} // want `mcpkit server.TasksConfigV1 registers mcpkit's 2025-11-25 \(V1\) task engine`
	server.RegisterTasksV1(cfg)              // want `mcpkit server.RegisterTasksV1 registers`
}

func clientSide(ctx context.Context, c *client.Client) {
	_, _ = client.ToolCallAsTaskV1(ctx, c, "render", nil) // want `mcpkit client.ToolCallAsTaskV1 calls a tool as a legacy task`
	var opts client.TaskCallOptionsV1                     // want `client.TaskCallOptionsV1 sets the removed per-request params.task`
	_, _ = client.GetTaskV1(ctx, c, "t")                  // want `client.GetTaskV1 calls tasks/get and returns its legacy result`
	_, _ = client.CancelTaskV1(ctx, c, "t")               // want `client.CancelTaskV1 expects tasks/cancel to return the Task`
	_, _ = client.WaitForTaskV1(ctx, c, "t", 0)           // want `client.WaitForTaskV1 uses the removed tasks/result method`
	_, _ = client.GetTaskPayloadV1(ctx, c, "t")           // want `client.GetTaskPayloadV1 uses the removed tasks/result method`
	_, _ = client.ListTasksV1(ctx, c)                     // want `client.ListTasksV1 calls the removed tasks/list method`
	_ = opts

	// The modern (extension) API reuses unsuffixed names: not flagged.
	res, _ := client.ToolCall(ctx, c, "render", nil)
	_ = res.IsTask()
	_, _ = client.GetTask(ctx, c, "t")
	_ = client.CancelTask(ctx, c, "t")
	_, _ = client.WaitForTask(ctx, c, "t")
}

func coreTypes(ctx context.Context, t core.TaskInfo) {
	_ = t.TTL                             // want `mcpkit core.TaskInfo.TTL is the legacy Task field "ttl"`
	_ = t.PollInterval                    // want `core.TaskInfo.PollInterval is the legacy Task field "pollInterval"`
	_ = t.ParentTaskID                    // want `core.TaskInfo.ParentTaskID is the legacy Task field "parentTaskId".*\[info\]$`
	var a core.CreateTaskResultV1         // want `core.CreateTaskResultV1 is the nested`
	var b core.GetTaskResultV1            // want `core.GetTaskResultV1 is the legacy tasks/get result`
	var d core.CancelTaskResultV1         // want `core.CancelTaskResultV1 is the legacy tasks/cancel result`
	var e core.ListTasksResultV1          // want `core.ListTasksResultV1 belongs to the removed tasks/list method`
	var f core.TasksCap                   // want `core.TasksCap is the legacy capabilities.tasks declaration`
	var g core.ClientTasksCap             // want `core.ClientTasksCap is the legacy`
	var h core.TasksCapMethod             // want `core.TasksCapMethod is the legacy`
	var i core.TasksCapRequests           // want `core.TasksCapRequests is the legacy`
	var j core.TasksCapToolsMethods       // want `core.TasksCapToolsMethods is the legacy`
	var k core.TasksCapSamplingMethods    // want `core.TasksCapSamplingMethods declares client-hosted`
	var l core.TasksCapElicitationMethods // want `core.TasksCapElicitationMethods declares client-hosted`
	_ = core.ClientSupportsTasksV1(ctx)   // want `core.ClientSupportsTasksV1 is the legacy`
	var sc core.ServerCapabilities
	_ = sc.Tasks // want `core.ServerCapabilities.Tasks is the legacy capabilities.tasks slot.*\[info\]$`
	var cc core.ClientCapabilities
	_ = cc.Tasks // want `core.ClientCapabilities.Tasks is the legacy capabilities.tasks slot`
	_, _, _, _, _, _, _, _, _, _, _ = a, b, d, e, f, g, h, i, j, k, l

	// Still used by the extension implementation: not flagged for mcpkit.
	_ = core.ToolExecution{TaskSupport: core.TaskSupportRequired}
	_ = core.ClientSupportsTasks(ctx)
	_ = core.TaskInfoV2{}
}
