// Package fineuse uses every catalogued finemcp identifier (positives).
package fineuse // want `^note: the package still serves 2025-11-25 peers \(it configures finemcp`

import (
	"example.com/std/context"

	"github.com/finemcp/finemcp"
	"github.com/finemcp/finemcp/client"
)

func root(t finemcp.Task, s *finemcp.TaskStore) {
	_ = finemcp.MethodTasksResult
	_ = finemcp.MethodTasksList
	_ = finemcp.MethodTasksGet    // unchanged: not flagged
	_ = finemcp.MethodTasksCancel // unchanged: not flagged
	var caps finemcp.ServerCapabilities
	_ = caps.Tasks
	var tc finemcp.TaskCapability
	var rc finemcp.TaskRequestsCapability
	var tt finemcp.TaskToolsCapability
	p := finemcp.CallToolParams{Name: "x"}
	p.Task = &finemcp.TaskMetadata{}
	var md finemcp.TaskMetadata
	_ = md.TTL
	_ = t.TTL
	_ = t.PollInterval
	var cr finemcp.CreateTaskResult
	_ = cr.Task
	var lr finemcp.ListTasksResult
	_, _ = s.List("")
	_, _ = s.ListByOwner("o", "")
	_, _ = s.GetResult("t")
	_ = s.Cancel("t")          // still valid: not flagged
	_ = finemcp.TaskIdParams{} // used by tasks/get too: not flagged
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
	_, _ = c.GetTask(ctx, "t") // still valid: not flagged
	_, _ = c.GetTaskResult(ctx, "t")
	_, _ = c.ListTasks(ctx, "")
	it := c.IterateTasks(ctx)
	var it2 *client.TasksIterator
	_, _ = c.CancelTask(ctx, "t")
	_, _ = lb.GetTask(ctx, "t") // still valid: not flagged
	_, _ = lb.GetTaskResult(ctx, "t")
	_, _ = lb.ListTasks(ctx, "")
	_, _ = lb.CancelTask(ctx, "t")
	_, _ = it, it2
}
