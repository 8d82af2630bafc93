package proxy

import (
	"context"
	"encoding/json"

	"example.com/gateway/wiretypes"
)

type handlerFunc func(g *Gateway, ctx context.Context, req Request) Response

// extraHandlers are methods served by plug-ins, looked up before Dispatch.
var extraHandlers = map[string]handlerFunc{
	"tasks/result": (*Gateway).blockingResult, // want MCP001
	"ping":         func(g *Gateway, ctx context.Context, req Request) Response { return g.ok(req, map[string]any{}) },
}

func (g *Gateway) blockingResult(ctx context.Context, req Request) Response {
	resp := g.forwardTask(ctx, req)
	if raw, ok := resp.Result.(json.RawMessage); ok {
		var t wiretypes.UpstreamTask
		if json.Unmarshal(raw, &t) == nil && t.TaskID != "" {
			g.mu.Lock()
			delete(g.owners, t.TaskID)
			g.mu.Unlock()
		}
	}
	return resp
}

type outNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// broadcast sends a notification to every listener.
func (g *Gateway) broadcast(method string, params any) {
	raw, _ := json.Marshal(outNotification{JSONRPC: "2.0", Method: method, Params: params})
	for _, l := range g.listeners {
		l(method, raw)
	}
}

// taskFinished tells every client that a gateway-run task ended.
func (g *Gateway) taskFinished(id, status string) {
	g.broadcast("notifications/tasks/status", map[string]string{"taskId": id, "status": status}) // want MCP003
}

var _ = extraHandlers
var _ = (*Gateway).taskFinished
