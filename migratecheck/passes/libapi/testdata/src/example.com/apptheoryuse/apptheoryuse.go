// Package apptheoryuse uses every catalogued apptheory runtime/mcp identifier.
package apptheoryuse

import (
	"github.com/theory-cloud/apptheory/v3/runtime/mcp"
)

func use(t mcp.Task, o mcp.TaskRuntimeOptions) { // want `^note: 2025-11-25 engine: apptheory mcp\.TaskRuntimeOptions`
	_ = t.TTL                   // want `^MCP006: apptheory mcp\.Task\.TTL is the legacy Task field "ttl": the`
	_ = t.PollInterval          // want `^MCP007: apptheory mcp\.Task\.PollInterval is the legacy Task field`
	_ = o.PollInterval          // want `^MCP007: apptheory mcp\.TaskRuntimeOptions\.PollInterval is the legacy Task`
	var md mcp.TaskMetadata     // want `^MCP005: apptheory mcp\.TaskMetadata is the removed per-request`
	_ = md.TTL                  // want `^MCP005: apptheory mcp\.TaskMetadata\.TTL is the removed per-request`
	var cr mcp.CreateTaskResult // want `^MCP008: apptheory mcp\.CreateTaskResult is the nested 2025-11-25`
	_ = cr.Task                 // want `^MCP008: apptheory mcp\.CreateTaskResult\.Task is the nested 2025-11-25`
	var te mcp.ToolExecution    // the type itself is not catalogued
	_ = te.TaskSupport          // want `^MCP009: apptheory mcp\.ToolExecution\.TaskSupport is read here; it holds`
	_ = mcp.WithTaskRuntime(o)  // want `^MCP004: apptheory mcp\.WithTaskRuntime enables apptheory's 2025-11-25` `^note: 2025-11-25 engine: apptheory mcp\.WithTaskRuntime`
	cc := mcp.CapabilityConfig{Tools: true}
	cc.Tasks = true              // want `^MCP004: apptheory mcp\.CapabilityConfig\.Tasks enables apptheory's` `^note: 2025-11-25 engine: apptheory mcp\.CapabilityConfig\.Tasks`
	var lq mcp.TaskListRequest   // want `^MCP002: apptheory mcp\.TaskListRequest belongs to the removed tasks/list`
	var lr mcp.TaskListResult    // want `^MCP002: apptheory mcp\.TaskListResult belongs to the removed tasks/list`
	_ = o.ListLimit              // want `^MCP002: apptheory mcp\.TaskRuntimeOptions\.ListLimit belongs to the`
	_ = o.ModelImmediateResponse // want `^MCP011: apptheory mcp\.TaskRuntimeOptions\.ModelImmediateResponse sets the`
	_, _ = lq, lr
}

func engine() mcp.TaskRuntimeOptions { // engine evidence only: not reported // want `^note: 2025-11-25 engine: apptheory mcp\.TaskRuntimeOptions`
	return mcp.TaskRuntimeOptions{Store: mcp.NewDynamoTaskStore("tasks")} // want `^note: 2025-11-25 engine: apptheory mcp\.TaskRuntimeOptions` `^note: 2025-11-25 engine: apptheory mcp\.NewDynamoTaskStore`
}

func engine2() mcp.TaskStore { return mcp.NewMemoryTaskStore() } // want `^note: 2025-11-25 engine: apptheory mcp\.TaskStore` `^note: 2025-11-25 engine: apptheory mcp\.NewMemoryTaskStore`
