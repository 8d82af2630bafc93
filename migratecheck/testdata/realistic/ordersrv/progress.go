package main

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// publishProgress pushes the job state to every connected client.
func publishProgress(s *server.MCPServer, t mcp.Task) {
	s.SendNotificationToAllClients(mcp.MethodNotificationTasksStatus, map[string]any{ // want MCP003
		"taskId":  t.TaskId,
		"status":  t.Status,
		"_meta":   mcp.RelatedTaskMeta(t.TaskId), // want MCP011
		"message": t.StatusMessage,
	})
}

// publishFailure is the raw variant used by the legacy worker pool.
func publishFailure(s *server.MCPServer, taskID, reason string) {
	s.SendNotificationToAllClients("notifications/tasks/status", map[string]any{ // want MCP003
		"taskId":        taskID,
		"status":        "failed",
		"statusMessage": reason,
	})
}

var _ = publishProgress
var _ = publishFailure
