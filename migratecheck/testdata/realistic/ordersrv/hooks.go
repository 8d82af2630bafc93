package main

import (
	"context"
	"log"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// registerAudit logs every task access for the compliance trail.
func registerAudit(h *server.Hooks) {
	h.AddBeforeTaskResult(func(ctx context.Context, id any, req *mcp.TaskResultRequest) { // want MCP001 MCP014
		log.Printf("audit: tasks/result for %s", req.Params.TaskId)
	})
	h.AddAfterListTasks(func(ctx context.Context, id any, req *mcp.ListTasksRequest, res *mcp.ListTasksResult) { // want MCP002
		log.Printf("audit: listed %d tasks", len(res.Tasks))
	})
	h.AddBeforeGetTask(func(ctx context.Context, id any, req *mcp.GetTaskRequest) {
		log.Printf("audit: tasks/get for %s", req.Params.TaskId)
	})
}
