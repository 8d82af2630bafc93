// Package mcpgouse uses every catalogued mcp-go identifier once (positives).
package mcpgouse

import (
	"example.com/std/json"

	"github.com/mark3labs/mcp-go/mcp"
)

func methods() []string {
	return []string{
		string(mcp.MethodTasksResult),
		string(mcp.MethodTasksList),
		mcp.MethodNotificationTasksStatus,
		string(mcp.MethodTasksGet),    // unchanged: not flagged
		string(mcp.MethodTasksCancel), // unchanged: not flagged
	}
}

func taskResult(raw *json.RawMessage) {
	var req mcp.TaskResultRequest
	req.Params = mcp.TaskResultParams{TaskId: "t"}
	var res *mcp.TaskResultResult
	res, _ = mcp.ParseTaskResultResult(raw)
	_, _ = req, res
}

func listTasks(raw *json.RawMessage, t mcp.Task) {
	var req mcp.ListTasksRequest
	var res mcp.ListTasksResult
	res = mcp.NewListTasksResult(nil)
	p, _ := mcp.ParseListTasksResult(raw)
	name := t.GetName()
	_, _, _, _ = req, res, p, name
}

func statusNotification(t mcp.Task) {
	var n mcp.TaskStatusNotification
	n.Params = mcp.TaskStatusNotificationParams{}
	n = mcp.NewTaskStatusNotification(t)
	_ = n
}

func capabilities() {
	var c mcp.TasksCapability
	c.List = &struct{}{}
	c.Cancel = &struct{}{}
	req := &mcp.TaskRequestsCapability{}
	c.Requests = req
	r := c.Requests
	_ = r.Tools
	_ = r.Sampling
	_ = r.Elicitation
	_ = mcp.NewTasksCapability()
	_ = mcp.NewTasksCapabilityWithToolsOnly()
	var s mcp.ServerCapabilities
	s.Tasks = nil
	var cc mcp.ClientCapabilities
	cc.Tasks = nil
}

func taskParams(ttl *int64) {
	p := mcp.CallToolParams{
		Name: "render",
		Task: &mcp.TaskParams{},
	}
	var tp mcp.TaskParams
	tp.TTL = ttl
	tp = mcp.NewTaskParams(ttl)
	_, _ = p, tp
}

func handlerReadsTask(req mcp.CallToolRequest) bool {
	return req.Params.Task != nil
}

func taskSupport() {
	t := mcp.Tool{Name: "x"}
	t.Execution = &mcp.ToolExecution{
		TaskSupport: mcp.TaskSupportOptional,
	}
	var ts mcp.TaskSupport = "x"
	ts = mcp.TaskSupportForbidden
	ts = mcp.TaskSupportRequired
	_ = mcp.NewTool("y", mcp.WithTaskSupport(ts))
	var e mcp.ToolExecution
	_ = e
}

func taskFields(t mcp.Task) {
	_ = t.TTL
	_ = mcp.NewTask("a", mcp.WithTaskTTL(5))
	_ = t.PollInterval
	_ = mcp.WithTaskPollInterval(100)
}

func createTaskResult(t mcp.Task) *mcp.CreateTaskResult {
	r := mcp.NewCreateTaskResult(t)
	r.Task = t
	r.Content = nil
	r.IsError = false
	r.StructuredContent = nil
	return &r
}

func cancelAndGet(raw *json.RawMessage, t mcp.Task) {
	var c mcp.CancelTaskResult
	c = mcp.NewCancelTaskResult(t)
	pc, _ := mcp.ParseCancelTaskResult(raw)
	var g mcp.GetTaskResult
	g = mcp.NewGetTaskResult(t)
	pg, _ := mcp.ParseGetTaskResult(raw)
	_, _, _, _ = c, pc, g, pg
}

func meta() {
	_ = mcp.RelatedTaskMetaKey
	_ = mcp.RelatedTaskMeta("t")
	_ = mcp.WithRelatedTask("t")
	_ = mcp.ModelImmediateResponseMetaKey
	_ = mcp.WithModelImmediateResponse("working on it")
}
