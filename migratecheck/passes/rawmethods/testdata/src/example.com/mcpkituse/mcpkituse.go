// Package mcpkituse uses every catalogued mcpkit *V1 identifier (positives)
// and mcpkit's modern API (negatives).
package mcpkituse // want `^note: the package still serves 2025-11-25 peers \(it configures mcpkit`

import (
	"example.com/std/context"

	"github.com/panyam/mcpkit/client"
	"github.com/panyam/mcpkit/core"
	"github.com/panyam/mcpkit/server"
)

func serverSide(srv *server.Server) {
	cfg := server.TasksConfigV1{Server: srv}
	server.RegisterTasksV1(cfg)
}

func clientSide(ctx context.Context, c *client.Client) {
	_, _ = client.ToolCallAsTaskV1(ctx, c, "render", nil)
	var opts client.TaskCallOptionsV1
	_, _ = client.GetTaskV1(ctx, c, "t")
	_, _ = client.CancelTaskV1(ctx, c, "t")
	_, _ = client.WaitForTaskV1(ctx, c, "t", 0)
	_, _ = client.GetTaskPayloadV1(ctx, c, "t")
	_, _ = client.ListTasksV1(ctx, c)
	_ = opts

	// The modern (extension) API reuses unsuffixed names: not flagged.
	res, _ := client.ToolCall(ctx, c, "render", nil)
	_ = res.IsTask()
	_, _ = client.GetTask(ctx, c, "t")
	_ = client.CancelTask(ctx, c, "t")
	_, _ = client.WaitForTask(ctx, c, "t")
}

func coreTypes(ctx context.Context, t core.TaskInfo) {
	_ = t.TTL
	_ = t.PollInterval
	_ = t.ParentTaskID
	var a core.CreateTaskResultV1
	var b core.GetTaskResultV1
	var d core.CancelTaskResultV1
	var e core.ListTasksResultV1
	var f core.TasksCap
	var g core.ClientTasksCap
	var h core.TasksCapMethod
	var i core.TasksCapRequests
	var j core.TasksCapToolsMethods
	var k core.TasksCapSamplingMethods
	var l core.TasksCapElicitationMethods
	_ = core.ClientSupportsTasksV1(ctx)
	var sc core.ServerCapabilities
	_ = sc.Tasks
	var cc core.ClientCapabilities
	_ = cc.Tasks
	_, _, _, _, _, _, _, _, _, _, _ = a, b, d, e, f, g, h, i, j, k, l

	// Still used by the extension implementation: not flagged for mcpkit.
	_ = core.ToolExecution{TaskSupport: core.TaskSupportRequired}
	_ = core.ClientSupportsTasks(ctx)
	_ = core.TaskInfoV2{}
}
