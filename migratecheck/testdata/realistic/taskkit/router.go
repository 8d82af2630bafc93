package taskkit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// Router answers the task methods from a Store, for servers that build their
// own JSON-RPC loop on mcp-go's types.
type Router struct {
	Store Store
}

// Handle answers one task method.
func (r *Router) Handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(params, &p)
	switch mcp.MCPMethod(method) {
	case mcp.MethodTasksGet:
		rec, err := r.Store.Get(ctx, p.TaskID)
		if err != nil {
			return nil, err
		}
		return toWire(rec), nil
	case mcp.MethodTasksResult: // want MCP001
		rec, err := r.Store.Wait(ctx, p.TaskID)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(rec.Result), nil
	case mcp.MethodTasksList: // want MCP002
		recs, err := r.Store.List(ctx, "")
		if err != nil {
			return nil, err
		}
		out := make([]Task, 0, len(recs))
		for _, rec := range recs {
			out = append(out, toWire(rec))
		}
		return map[string]any{"tasks": out}, nil
	case mcp.MethodTasksCancel:
		return map[string]any{}, r.Store.Cancel(ctx, p.TaskID)
	}
	return nil, fmt.Errorf("taskkit: %s is not a task method", method)
}
