// Package apptheoryuse uses every catalogued apptheory runtime/mcp identifier.
package apptheoryuse

import (
	"github.com/theory-cloud/apptheory/v3/runtime/mcp"
)

func use(t mcp.Task, o mcp.TaskRuntimeOptions) {
	_ = t.TTL                   // want `apptheory mcp.Task.TTL is the legacy Task field "ttl"`
	_ = t.PollInterval          // want `mcp.Task.PollInterval is the legacy Task field "pollInterval"`
	_ = o.PollInterval          // want `mcp.TaskRuntimeOptions.PollInterval is the legacy`
	var md mcp.TaskMetadata     // want `mcp.TaskMetadata is the removed per-request params.task`
	_ = md.TTL                  // want `mcp.TaskMetadata.TTL is the removed`
	var cr mcp.CreateTaskResult // want `mcp.CreateTaskResult is the nested`
	_ = cr.Task                 // want `mcp.CreateTaskResult.Task is the nested`
	var te mcp.ToolExecution    // the type itself is not catalogued
	_ = te.TaskSupport          // want `mcp.ToolExecution.TaskSupport is read here; it holds the removed tool execution.taskSupport`
	_ = mcp.WithTaskRuntime(o)  // want `mcp.WithTaskRuntime enables apptheory's 2025-11-25 task runtime.*\[info\]$`
	cc := mcp.CapabilityConfig{Tools: true}
	cc.Tasks = true              // want `mcp.CapabilityConfig.Tasks enables`
	var lq mcp.TaskListRequest   // want `mcp.TaskListRequest belongs to the removed tasks/list method`
	var lr mcp.TaskListResult    // want `mcp.TaskListResult belongs`
	_ = o.ListLimit              // want `mcp.TaskRuntimeOptions.ListLimit belongs`
	_ = o.ModelImmediateResponse // want `mcp.TaskRuntimeOptions.ModelImmediateResponse sets the legacy _meta key`
	_, _ = lq, lr
}

func engine() mcp.TaskRuntimeOptions { // engine evidence only: not reported
	return mcp.TaskRuntimeOptions{Store: mcp.NewDynamoTaskStore("tasks")}
}

func engine2() mcp.TaskStore { return mcp.NewMemoryTaskStore() }
