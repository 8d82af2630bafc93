package main

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"example.com/ordersrv/internal/export"
)

func registerTools(s *server.MCPServer) {
	exportTool := mcp.NewTool("export_orders",
		mcp.WithDescription("Export all orders of a month as CSV"),
		mcp.WithString("month", mcp.Required(), mcp.Description("YYYY-MM")),
		mcp.WithTaskSupport(mcp.TaskSupportRequired), // want MCP009
	)
	s.AddTaskTool(exportTool, exportOrders) // want MCP008
	s.AddTool(mcp.NewTool("ping", mcp.WithDescription("liveness")), ping)
}

func ping(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText("pong"), nil
}

// exportOrders starts an export job and hands back the task at once.
func exportOrders(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) { // want MCP008
	if req.Params.Task == nil { // want MCP005
		return nil, fmt.Errorf("export_orders runs only as a task")
	}
	month := req.GetString("month", "")
	if month == "" {
		return nil, fmt.Errorf("month is required")
	}
	id := export.Start(month)
	task := mcp.NewTask(id,
		mcp.WithTaskTTL(3_600_000),     // want MCP006
		mcp.WithTaskPollInterval(2000), // want MCP007
	)
	res := mcp.NewCreateTaskResult(task) // want MCP008
	return &res, nil
}
