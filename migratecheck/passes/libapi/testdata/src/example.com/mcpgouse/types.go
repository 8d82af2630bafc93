// Package mcpgouse uses every catalogued mcp-go identifier once (positives).
package mcpgouse

import (
	"example.com/std/json"

	"github.com/mark3labs/mcp-go/mcp"
)

func methods() []string {
	return []string{
		string(mcp.MethodTasksResult),     // want `^MCP001: mcp-go mcp\.MethodTasksResult names the removed method`
		string(mcp.MethodTasksList),       // want `^MCP002: mcp-go mcp\.MethodTasksList names the removed method`
		mcp.MethodNotificationTasksStatus, // want `^MCP003: mcp-go mcp\.MethodNotificationTasksStatus names the legacy`
		string(mcp.MethodTasksGet),        // unchanged: not flagged
		string(mcp.MethodTasksCancel),     // unchanged: not flagged
	}
}

func taskResult(raw *json.RawMessage) {
	var req mcp.TaskResultRequest                  // want `^MCP001: mcp-go mcp\.TaskResultRequest belongs to the removed tasks/result`
	req.Params = mcp.TaskResultParams{TaskId: "t"} // want `^MCP001: mcp-go mcp\.TaskResultParams belongs to the removed tasks/result`
	var res *mcp.TaskResultResult                  // want `^MCP001: mcp-go mcp\.TaskResultResult belongs to the removed tasks/result`
	res, _ = mcp.ParseTaskResultResult(raw)        // want `^MCP001: mcp-go mcp\.ParseTaskResultResult belongs to the removed`
	_, _ = req, res
}

func listTasks(raw *json.RawMessage, t mcp.Task) {
	var req mcp.ListTasksRequest          // want `^MCP002: mcp-go mcp\.ListTasksRequest belongs to the removed tasks/list`
	var res mcp.ListTasksResult           // want `^MCP002: mcp-go mcp\.ListTasksResult belongs to the removed tasks/list`
	res = mcp.NewListTasksResult(nil)     // want `^MCP002: mcp-go mcp\.NewListTasksResult belongs to the removed tasks/list`
	p, _ := mcp.ParseListTasksResult(raw) // want `^MCP002: mcp-go mcp\.ParseListTasksResult belongs to the removed`
	name := t.GetName()                   // want `^MCP002: mcp-go mcp\.Task\.GetName exists to paginate the removed`
	_, _, _, _ = req, res, p, name
}

func statusNotification(t mcp.Task) {
	var n mcp.TaskStatusNotification              // want `^MCP003: mcp-go mcp\.TaskStatusNotification builds the legacy`
	n.Params = mcp.TaskStatusNotificationParams{} // want `^MCP003: mcp-go mcp\.TaskStatusNotificationParams builds the legacy`
	n = mcp.NewTaskStatusNotification(t)          // want `^MCP003: mcp-go mcp\.NewTaskStatusNotification builds the legacy`
	_ = n
}

func capabilities() {
	var c mcp.TasksCapability                 // want `^MCP004: mcp-go mcp\.TasksCapability is the legacy capabilities\.tasks`
	c.List = &struct{}{}                      // want `^MCP004: mcp-go mcp\.TasksCapability\.List is the legacy capabilities\.tasks`
	c.Cancel = &struct{}{}                    // want `^MCP004: mcp-go mcp\.TasksCapability\.Cancel is the legacy`
	req := &mcp.TaskRequestsCapability{}      // want `^MCP004: mcp-go mcp\.TaskRequestsCapability is the legacy`
	c.Requests = req                          // want `^MCP004: mcp-go mcp\.TasksCapability\.Requests is the legacy`
	r := c.Requests                           // want `^MCP004: mcp-go mcp\.TasksCapability\.Requests is the legacy`
	_ = r.Tools                               // want `^MCP004: mcp-go mcp\.TaskRequestsCapability\.Tools is the legacy`
	_ = r.Sampling                            // want `^MCP013: mcp-go mcp\.TaskRequestsCapability\.Sampling is read here; it`
	_ = r.Elicitation                         // want `^MCP013: mcp-go mcp\.TaskRequestsCapability\.Elicitation is read here; it`
	_ = mcp.NewTasksCapability()              // want `^MCP004: mcp-go mcp\.NewTasksCapability is the legacy capabilities\.tasks`
	_ = mcp.NewTasksCapabilityWithToolsOnly() // want `^MCP004: mcp-go mcp\.NewTasksCapabilityWithToolsOnly is the legacy`
	var s mcp.ServerCapabilities
	s.Tasks = nil // want `^MCP004: mcp-go mcp\.ServerCapabilities\.Tasks is the legacy`
	var cc mcp.ClientCapabilities
	cc.Tasks = nil // want `^MCP004: mcp-go mcp\.ClientCapabilities\.Tasks is the legacy`
}

func taskParams(ttl *int64) {
	p := mcp.CallToolParams{
		Name: "render",
		Task: &mcp.TaskParams{}, // want `^MCP005: mcp-go mcp\.CallToolParams\.Task is the removed per-request`
	}
	var tp mcp.TaskParams       // want `^MCP005: mcp-go mcp\.TaskParams is the removed per-request params\.task:`
	tp.TTL = ttl                // want `^MCP005: mcp-go mcp\.TaskParams\.TTL is the removed per-request`
	tp = mcp.NewTaskParams(ttl) // want `^MCP005: mcp-go mcp\.NewTaskParams is the removed per-request params\.task:`
	_, _ = p, tp
}

func handlerReadsTask(req mcp.CallToolRequest) bool {
	return req.Params.Task != nil // want `^MCP005: mcp-go mcp\.CallToolParams\.Task is the removed per-request`
}

func taskSupport() {
	t := mcp.Tool{Name: "x"}
	t.Execution = &mcp.ToolExecution{ // want `^MCP009: mcp-go mcp\.Tool\.Execution declares the removed tool`
		TaskSupport:             // want `^MCP009: mcp-go mcp\.ToolExecution\.TaskSupport declares the removed tool`
		mcp.TaskSupportOptional, // want `^MCP009: mcp-go mcp\.TaskSupportOptional declares the removed tool`
	}
	var ts mcp.TaskSupport = "x"                  // want `^MCP009: mcp-go mcp\.TaskSupport declares the removed tool`
	ts = mcp.TaskSupportForbidden                 // want `^MCP009: mcp-go mcp\.TaskSupportForbidden declares the removed tool`
	ts = mcp.TaskSupportRequired                  // want `^MCP009: mcp-go mcp\.TaskSupportRequired declares the removed tool`
	_ = mcp.NewTool("y", mcp.WithTaskSupport(ts)) // want `^MCP009: mcp-go mcp\.WithTaskSupport declares the removed tool`
	var e mcp.ToolExecution                       // want `^MCP009: mcp-go mcp\.ToolExecution declares the removed tool`
	_ = e
}

func taskFields(t mcp.Task) {
	_ = t.TTL                                // want `^MCP006: mcp-go mcp\.Task\.TTL is the legacy Task field "ttl": the`
	_ = mcp.NewTask("a", mcp.WithTaskTTL(5)) // want `^MCP006: mcp-go mcp\.WithTaskTTL is the legacy Task field "ttl": the`
	_ = t.PollInterval                       // want `^MCP007: mcp-go mcp\.Task\.PollInterval is the legacy Task field`
	_ = mcp.WithTaskPollInterval(100)        // want `^MCP007: mcp-go mcp\.WithTaskPollInterval is the legacy Task field`
}

func createTaskResult(t mcp.Task) *mcp.CreateTaskResult { // want `^MCP008: mcp-go mcp\.CreateTaskResult is the nested 2025-11-25`
	r := mcp.NewCreateTaskResult(t) // want `^MCP008: mcp-go mcp\.NewCreateTaskResult is the nested 2025-11-25`
	r.Task = t                      // want `^MCP008: mcp-go mcp\.CreateTaskResult\.Task is the nested 2025-11-25`
	r.Content = nil                 // want `^MCP008: mcp-go mcp\.CreateTaskResult\.Content is the nested 2025-11-25`
	r.IsError = false               // want `^MCP008: mcp-go mcp\.CreateTaskResult\.IsError is the nested 2025-11-25`
	r.StructuredContent = nil       // want `^MCP008: mcp-go mcp\.CreateTaskResult\.StructuredContent is the nested`
	return &r
}

func cancelAndGet(raw *json.RawMessage, t mcp.Task) {
	var c mcp.CancelTaskResult              // want `^MCP012: mcp-go mcp\.CancelTaskResult is the legacy tasks/cancel result`
	c = mcp.NewCancelTaskResult(t)          // want `^MCP012: mcp-go mcp\.NewCancelTaskResult is the legacy tasks/cancel result`
	pc, _ := mcp.ParseCancelTaskResult(raw) // want `^MCP012: mcp-go mcp\.ParseCancelTaskResult is the legacy tasks/cancel`
	var g mcp.GetTaskResult                 // want `^MCP015: mcp-go mcp\.GetTaskResult is the legacy tasks/get result \(a bare`
	g = mcp.NewGetTaskResult(t)             // want `^MCP015: mcp-go mcp\.NewGetTaskResult is the legacy tasks/get result \(a`
	pg, _ := mcp.ParseGetTaskResult(raw)    // want `^MCP015: mcp-go mcp\.ParseGetTaskResult is the legacy tasks/get result \(a`
	_, _, _, _ = c, pc, g, pg
}

func meta() {
	_ = mcp.RelatedTaskMetaKey                          // want `^MCP011: mcp-go mcp\.RelatedTaskMetaKey is the legacy _meta key`
	_ = mcp.RelatedTaskMeta("t")                        // want `^MCP011: mcp-go mcp\.RelatedTaskMeta is the legacy _meta key`
	_ = mcp.WithRelatedTask("t")                        // want `^MCP011: mcp-go mcp\.WithRelatedTask is the legacy _meta key`
	_ = mcp.ModelImmediateResponseMetaKey               // want `^MCP011: mcp-go mcp\.ModelImmediateResponseMetaKey is the legacy _meta key`
	_ = mcp.WithModelImmediateResponse("working on it") // want `^MCP011: mcp-go mcp\.WithModelImmediateResponse is the legacy _meta key`
}
