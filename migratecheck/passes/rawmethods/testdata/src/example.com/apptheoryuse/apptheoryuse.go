// Package apptheoryuse uses every catalogued apptheory runtime/mcp identifier.
package apptheoryuse // want `^note: the package still serves 2025-11-25 peers \(it configures apptheory`

import (
	"github.com/theory-cloud/apptheory/v3/runtime/mcp"
)

func use(t mcp.Task, o mcp.TaskRuntimeOptions) {
	_ = t.TTL
	_ = t.PollInterval
	_ = o.PollInterval
	var md mcp.TaskMetadata
	_ = md.TTL
	var cr mcp.CreateTaskResult
	_ = cr.Task
	var te mcp.ToolExecution // the type itself is not catalogued
	_ = te.TaskSupport
	_ = mcp.WithTaskRuntime(o)
	cc := mcp.CapabilityConfig{Tools: true}
	cc.Tasks = true
	var lq mcp.TaskListRequest
	var lr mcp.TaskListResult
	_ = o.ListLimit
	_ = o.ModelImmediateResponse
	_, _ = lq, lr
}

func engine() mcp.TaskRuntimeOptions { // engine evidence only: not reported
	return mcp.TaskRuntimeOptions{Store: mcp.NewDynamoTaskStore("tasks")}
}

func engine2() mcp.TaskStore { return mcp.NewMemoryTaskStore() }
