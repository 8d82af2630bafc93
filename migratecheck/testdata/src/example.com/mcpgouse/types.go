// Package mcpgouse uses every catalogued mcp-go identifier once (positives).
package mcpgouse

import (
	"example.com/std/json"

	"github.com/mark3labs/mcp-go/mcp"
)

func methods() []string {
	return []string{
		string(mcp.MethodTasksResult),     // want `mcp-go mcp.MethodTasksResult names the removed method "tasks/result"`
		string(mcp.MethodTasksList),       // want `mcp-go mcp.MethodTasksList names the removed method "tasks/list"`
		mcp.MethodNotificationTasksStatus, // want `mcp-go mcp.MethodNotificationTasksStatus names the legacy notification`
		string(mcp.MethodTasksGet),        // unchanged: not flagged
		string(mcp.MethodTasksCancel),     // unchanged: not flagged
	}
}

func taskResult(raw *json.RawMessage) {
	var req mcp.TaskResultRequest                  // want `mcp-go mcp.TaskResultRequest belongs to the removed tasks/result method`
	req.Params = mcp.TaskResultParams{TaskId: "t"} // want `mcp.TaskResultParams belongs`
	var res *mcp.TaskResultResult                  // want `mcp.TaskResultResult belongs`
	res, _ = mcp.ParseTaskResultResult(raw)        // want `mcp.ParseTaskResultResult belongs`
	_, _ = req, res
}

func listTasks(raw *json.RawMessage, t mcp.Task) {
	var req mcp.ListTasksRequest          // want `mcp.ListTasksRequest belongs to the removed tasks/list method`
	var res mcp.ListTasksResult           // want `mcp.ListTasksResult belongs`
	res = mcp.NewListTasksResult(nil)     // want `mcp.NewListTasksResult belongs`
	p, _ := mcp.ParseListTasksResult(raw) // want `mcp.ParseListTasksResult belongs`
	name := t.GetName()                   // want `mcp.Task.GetName exists to paginate`
	_, _, _, _ = req, res, p, name
}

func statusNotification(t mcp.Task) {
	var n mcp.TaskStatusNotification              // want `mcp.TaskStatusNotification builds the legacy`
	n.Params = mcp.TaskStatusNotificationParams{} // want `mcp.TaskStatusNotificationParams builds`
	n = mcp.NewTaskStatusNotification(t)          // want `mcp.NewTaskStatusNotification builds`
	_ = n
}

func capabilities() {
	var c mcp.TasksCapability                 // want `mcp.TasksCapability is the legacy capabilities.tasks declaration`
	c.List = &struct{}{}                      // want `mcp.TasksCapability.List is the legacy`
	c.Cancel = &struct{}{}                    // want `mcp.TasksCapability.Cancel is the legacy`
	req := &mcp.TaskRequestsCapability{}      // want `mcp.TaskRequestsCapability is the legacy`
	c.Requests = req                          // want `mcp.TasksCapability.Requests is the legacy`
	r := c.Requests                           // want `mcp.TasksCapability.Requests`
	_ = r.Tools                               // want `mcp.TaskRequestsCapability.Tools is the legacy`
	_ = r.Sampling                            // want `mcp.TaskRequestsCapability.Sampling is read here; it holds client-hosted`
	_ = r.Elicitation                         // want `mcp.TaskRequestsCapability.Elicitation is read here; it holds client-hosted`
	_ = mcp.NewTasksCapability()              // want `mcp.NewTasksCapability is the legacy`
	_ = mcp.NewTasksCapabilityWithToolsOnly() // want `mcp.NewTasksCapabilityWithToolsOnly is the legacy`
	var s mcp.ServerCapabilities
	s.Tasks = nil // want `mcp.ServerCapabilities.Tasks is the legacy capabilities.tasks slot.*\[info\]$`
	var cc mcp.ClientCapabilities
	cc.Tasks = nil // want `mcp.ClientCapabilities.Tasks is the legacy capabilities.tasks slot`
}

func taskParams(ttl *int64) {
	p := mcp.CallToolParams{
		Name: "render",
		Task: &mcp.TaskParams{}, // want `mcp.CallToolParams.Task is the removed per-request params.task`
	}
	var tp mcp.TaskParams       // want `mcp.TaskParams is the removed`
	tp.TTL = ttl                // want `mcp.TaskParams.TTL is the removed`
	tp = mcp.NewTaskParams(ttl) // want `mcp.NewTaskParams is the removed`
	_, _ = p, tp
}

func handlerReadsTask(req mcp.CallToolRequest) bool {
	return req.Params.Task != nil // want `mcp.CallToolParams.Task is the removed per-request params.task.*\[info\]$`
}

func taskSupport() {
	t := mcp.Tool{Name: "x"}
	t.Execution = &mcp.ToolExecution{ // want `mcp.Tool.Execution declares the removed tool execution.taskSupport`
		TaskSupport:             // want `mcp.ToolExecution.TaskSupport declares`
		mcp.TaskSupportOptional, // want `mcp.TaskSupportOptional declares`
	}
	var ts mcp.TaskSupport = "x"                  // want `mcp.TaskSupport declares`
	ts = mcp.TaskSupportForbidden                 // want `mcp.TaskSupportForbidden declares`
	ts = mcp.TaskSupportRequired                  // want `mcp.TaskSupportRequired declares`
	_ = mcp.NewTool("y", mcp.WithTaskSupport(ts)) // want `mcp.WithTaskSupport declares`
	var e mcp.ToolExecution                       // want `mcp.ToolExecution declares`
	_ = e
}

func taskFields(t mcp.Task) {
	_ = t.TTL                                // want `mcp.Task.TTL is the legacy Task field "ttl"`
	_ = mcp.NewTask("a", mcp.WithTaskTTL(5)) // want `mcp.WithTaskTTL is the legacy Task field "ttl"`
	_ = t.PollInterval                       // want `mcp.Task.PollInterval is the legacy Task field "pollInterval"`
	_ = mcp.WithTaskPollInterval(100)        // want `mcp.WithTaskPollInterval is the legacy`
}

func createTaskResult(t mcp.Task) *mcp.CreateTaskResult { // want `mcp.CreateTaskResult is the nested`
	r := mcp.NewCreateTaskResult(t) // want `mcp.NewCreateTaskResult is the nested`
	r.Task = t                      // want `mcp.CreateTaskResult.Task is the nested`
	r.Content = nil                 // want `mcp.CreateTaskResult.Content is the nested`
	r.IsError = false               // want `mcp.CreateTaskResult.IsError is the nested`
	r.StructuredContent = nil       // want `mcp.CreateTaskResult.StructuredContent is the nested`
	return &r
}

func cancelAndGet(raw *json.RawMessage, t mcp.Task) {
	var c mcp.CancelTaskResult              // want `mcp.CancelTaskResult is the legacy tasks/cancel result`
	c = mcp.NewCancelTaskResult(t)          // want `mcp.NewCancelTaskResult is the legacy tasks/cancel`
	pc, _ := mcp.ParseCancelTaskResult(raw) // want `mcp.ParseCancelTaskResult is the legacy tasks/cancel`
	var g mcp.GetTaskResult                 // want `mcp.GetTaskResult is the legacy tasks/get result \(a bare Task\): tasks/get now returns a DetailedTask`
	g = mcp.NewGetTaskResult(t)             // want `mcp.NewGetTaskResult is the legacy tasks/get`
	pg, _ := mcp.ParseGetTaskResult(raw)    // want `mcp.ParseGetTaskResult is the legacy tasks/get`
	_, _, _, _ = c, pc, g, pg
}

func meta() {
	_ = mcp.RelatedTaskMetaKey                          // want `mcp.RelatedTaskMetaKey is the legacy _meta key`
	_ = mcp.RelatedTaskMeta("t")                        // want `mcp.RelatedTaskMeta is the legacy _meta key`
	_ = mcp.WithRelatedTask("t")                        // want `mcp.WithRelatedTask is the legacy _meta key`
	_ = mcp.ModelImmediateResponseMetaKey               // want `mcp.ModelImmediateResponseMetaKey is the legacy _meta key`
	_ = mcp.WithModelImmediateResponse("working on it") // want `mcp.WithModelImmediateResponse is the legacy`
}
