package agent

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
)

// ElicitationFor answers an elicitation the server sent on behalf of a task;
// the related-task key tells which task asked.
func ElicitationFor(req mcp.ElicitationRequest) string {
	if req.Params.Meta == nil {
		return ""
	}
	rel, _ := req.Params.Meta.AdditionalFields[mcp.RelatedTaskMetaKey].(map[string]any) // want MCP011
	id, _ := rel["taskId"].(string)
	return id
}

// Wait polls with the library helper until the task is terminal.
func (a *Agent) Wait(ctx context.Context, id string) (*mcp.GetTaskResult, error) { // want MCP015:info
	return a.c.WaitForTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}}, 0) // want MCP007:info
}
