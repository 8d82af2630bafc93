// Package fineuse uses every catalogued finemcp identifier (positives).
package fineuse

import (
	"example.com/std/context"

	"github.com/finemcp/finemcp"
	"github.com/finemcp/finemcp/client"
)

func root(t finemcp.Task, s *finemcp.TaskStore) { // want `^note: 2025-11-25 engine: finemcp finemcp\.TaskStore`
	_ = finemcp.MethodTasksResult // want `^MCP001: finemcp finemcp\.MethodTasksResult names the removed method`
	_ = finemcp.MethodTasksList   // want `^MCP002: finemcp finemcp\.MethodTasksList names the removed method`
	_ = finemcp.MethodTasksGet    // unchanged: not flagged
	_ = finemcp.MethodTasksCancel // unchanged: not flagged
	var caps finemcp.ServerCapabilities
	_ = caps.Tasks                        // want `^MCP004: finemcp finemcp\.ServerCapabilities\.Tasks is the legacy`
	var tc finemcp.TaskCapability         // want `^MCP004: finemcp finemcp\.TaskCapability is the legacy capabilities\.tasks`
	var rc finemcp.TaskRequestsCapability // want `^MCP004: finemcp finemcp\.TaskRequestsCapability is the legacy`
	var tt finemcp.TaskToolsCapability    // want `^MCP004: finemcp finemcp\.TaskToolsCapability is the legacy`
	p := finemcp.CallToolParams{Name: "x"}
	p.Task = &finemcp.TaskMetadata{} // want `^MCP005: finemcp finemcp\.CallToolParams\.Task is the removed per-request`
	var md finemcp.TaskMetadata      // want `^MCP005: finemcp finemcp\.TaskMetadata is the removed per-request`
	_ = md.TTL                       // want `^MCP005: finemcp finemcp\.TaskMetadata\.TTL is the removed per-request`
	_ = t.TTL                        // want `^MCP006: finemcp finemcp\.Task\.TTL is the legacy Task field "ttl": the`
	_ = t.PollInterval               // want `^MCP007: finemcp finemcp\.Task\.PollInterval is the legacy Task field`
	var cr finemcp.CreateTaskResult  // want `^MCP008: finemcp finemcp\.CreateTaskResult is the nested 2025-11-25`
	_ = cr.Task                      // want `^MCP008: finemcp finemcp\.CreateTaskResult\.Task is the nested 2025-11-25`
	var lr finemcp.ListTasksResult   // want `^MCP002: finemcp finemcp\.ListTasksResult belongs to the removed`
	_, _ = s.List("")                // want `^MCP002: finemcp finemcp\.TaskStore\.List belongs to the removed tasks/list`
	_, _ = s.ListByOwner("o", "")    // want `^MCP002: finemcp finemcp\.TaskStore\.ListByOwner belongs to the removed`
	_, _ = s.GetResult("t")          // want `^MCP001: finemcp finemcp\.TaskStore\.GetResult serves the removed` `^note: 2025-11-25 engine: finemcp finemcp\.TaskStore\.GetResult`
	_ = s.Cancel("t")                // still valid: not flagged
	_ = finemcp.TaskIdParams{}       // used by tasks/get too: not flagged
	_, _, _, _, _ = tc, rc, tt, lr, p
}

func engine() {
	var s *finemcp.TaskStore     // engine evidence only: not reported // want `^note: 2025-11-25 engine: finemcp finemcp\.TaskStore`
	s = finemcp.NewTaskStore()   // want `^note: 2025-11-25 engine: finemcp finemcp\.NewTaskStore`
	_ = finemcp.WithTaskStore(s) // want `^note: 2025-11-25 engine: finemcp finemcp\.WithTaskStore`
	_ = finemcp.WithMaxTasks(3)  // want `^note: 2025-11-25 engine: finemcp finemcp\.WithMaxTasks`
	_ = finemcp.TaskOptions{}    // want `^note: 2025-11-25 engine: finemcp finemcp\.TaskOptions`
}

func clients(ctx context.Context, c *client.Client, lb *client.LoadBalancer) {
	_, _ = c.GetTask(ctx, "t")        // still valid: not flagged
	_, _ = c.GetTaskResult(ctx, "t")  // want `^MCP001: finemcp client\.Client\.GetTaskResult calls the removed`
	_, _ = c.ListTasks(ctx, "")       // want `^MCP002: finemcp client\.Client\.ListTasks calls the removed tasks/list`
	it := c.IterateTasks(ctx)         // want `^MCP002: finemcp client\.Client\.IterateTasks calls the removed tasks/list`
	var it2 *client.TasksIterator     // want `^MCP002: finemcp client\.TasksIterator calls the removed tasks/list`
	_, _ = c.CancelTask(ctx, "t")     // want `^MCP012: finemcp client\.Client\.CancelTask expects tasks/cancel to return`
	_, _ = lb.GetTask(ctx, "t")       // still valid: not flagged
	_, _ = lb.GetTaskResult(ctx, "t") // want `^MCP001: finemcp client\.LoadBalancer\.GetTaskResult calls the removed`
	_, _ = lb.ListTasks(ctx, "")      // want `^MCP002: finemcp client\.LoadBalancer\.ListTasks calls the removed`
	_, _ = lb.CancelTask(ctx, "t")    // want `^MCP012: finemcp client\.LoadBalancer\.CancelTask expects tasks/cancel to`
	_, _ = it, it2
}
