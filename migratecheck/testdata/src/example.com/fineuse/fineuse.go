// Package fineuse uses every catalogued finemcp identifier (positives).
package fineuse

import (
	"example.com/std/context"

	"github.com/finemcp/finemcp"
	"github.com/finemcp/finemcp/client"
)

func root(t finemcp.Task, s *finemcp.TaskStore) {
	_ = finemcp.MethodTasksResult // want `finemcp finemcp.MethodTasksResult names the removed method "tasks/result"`
	_ = finemcp.MethodTasksList   // want `finemcp.MethodTasksList names the removed method "tasks/list"`
	_ = finemcp.MethodTasksGet    // unchanged: not flagged
	_ = finemcp.MethodTasksCancel // unchanged: not flagged
	var caps finemcp.ServerCapabilities
	_ = caps.Tasks                        // want `finemcp.ServerCapabilities.Tasks is the legacy`
	var tc finemcp.TaskCapability         // want `finemcp.TaskCapability is the legacy capabilities.tasks declaration`
	var rc finemcp.TaskRequestsCapability // want `finemcp.TaskRequestsCapability is the legacy`
	var tt finemcp.TaskToolsCapability    // want `finemcp.TaskToolsCapability is the legacy`
	p := finemcp.CallToolParams{Name: "x"}
	p.Task = &finemcp.TaskMetadata{} // want `finemcp.CallToolParams.Task is the removed per-request params.task`
	var md finemcp.TaskMetadata      // want `finemcp.TaskMetadata is the removed`
	_ = md.TTL                       // want `finemcp.TaskMetadata.TTL is the removed`
	_ = t.TTL                        // want `finemcp.Task.TTL is the legacy Task field "ttl"`
	_ = t.PollInterval               // want `finemcp.Task.PollInterval is the legacy Task field "pollInterval"`
	var cr finemcp.CreateTaskResult  // want `finemcp.CreateTaskResult is the nested`
	_ = cr.Task                      // want `finemcp.CreateTaskResult.Task is the nested`
	var lr finemcp.ListTasksResult   // want `finemcp.ListTasksResult belongs to the removed tasks/list method`
	_, _ = s.List("")                // want `finemcp.TaskStore.List belongs to the removed tasks/list method`
	_, _ = s.ListByOwner("o", "")    // want `finemcp.TaskStore.ListByOwner belongs`
	_, _ = s.GetResult("t")          // want `finemcp.TaskStore.GetResult serves the removed tasks/result method`
	_ = s.Cancel("t")                // still valid: not flagged
	_ = finemcp.TaskIdParams{}       // used by tasks/get too: not flagged
	_, _, _, _, _ = tc, rc, tt, lr, p
}

func engine() {
	var s *finemcp.TaskStore // engine evidence only: not reported
	s = finemcp.NewTaskStore()
	_ = finemcp.WithTaskStore(s)
	_ = finemcp.WithMaxTasks(3)
	_ = finemcp.TaskOptions{}
}

func clients(ctx context.Context, c *client.Client, lb *client.LoadBalancer) {
	_, _ = c.GetTask(ctx, "t")        // still valid: not flagged
	_, _ = c.GetTaskResult(ctx, "t")  // want `finemcp client.Client.GetTaskResult calls the removed tasks/result method`
	_, _ = c.ListTasks(ctx, "")       // want `client.Client.ListTasks calls the removed tasks/list method`
	it := c.IterateTasks(ctx)         // want `client.Client.IterateTasks calls the removed tasks/list method`
	var it2 *client.TasksIterator     // want `client.TasksIterator calls the removed tasks/list method`
	_, _ = c.CancelTask(ctx, "t")     // want `client.Client.CancelTask expects tasks/cancel to return the Task`
	_, _ = lb.GetTask(ctx, "t")       // still valid: not flagged
	_, _ = lb.GetTaskResult(ctx, "t") // want `client.LoadBalancer.GetTaskResult calls the removed tasks/result`
	_, _ = lb.ListTasks(ctx, "")      // want `client.LoadBalancer.ListTasks calls the removed tasks/list`
	_, _ = lb.CancelTask(ctx, "t")    // want `client.LoadBalancer.CancelTask expects tasks/cancel`
	_, _ = it, it2
}
