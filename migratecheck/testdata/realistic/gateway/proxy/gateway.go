// Package proxy is an MCP gateway: it terminates client sessions, routes
// tools/call to the upstream that owns the tool, and keeps a task index so
// that task methods reach the upstream that created the task.
package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
)

// Request is a JSON-RPC request as received from a client.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// Response is a JSON-RPC response.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Upstream is one MCP server behind the gateway.
type Upstream interface {
	Forward(ctx context.Context, req Request) (json.RawMessage, error)
}

// Gateway routes client requests to upstreams.
type Gateway struct {
	mu        sync.Mutex
	owners    map[string]Upstream // task ID → upstream
	tools     map[string]Upstream
	dropped   atomic.Int64
	listeners []func(method string, params json.RawMessage)
}

// Dispatch handles one client request.
func (g *Gateway) Dispatch(ctx context.Context, req Request) Response {
	switch req.Method {
	case methodInitialize:
		return g.ok(req, map[string]any{"protocolVersion": "2025-11-25", "capabilities": serverCapabilities()})
	case methodToolsCall:
		return g.forwardTool(ctx, req)
	case methodTasksGet, methodTasksCancel:
		return g.forwardTask(ctx, req)
	case methodTasksResult:
		// Blocks until the upstream task is terminal.
		return g.forwardTask(ctx, req)
	case "tasks/list": // want MCP002
		return g.ok(req, map[string]any{"tasks": g.listIndex()})
	}
	return g.fail(req, -32601, "method not found")
}

func (g *Gateway) ok(req Request, v any) Response {
	return Response{JSONRPC: "2.0", ID: req.ID, Result: v}
}

func (g *Gateway) fail(req Request, code int, msg string) Response {
	return Response{JSONRPC: "2.0", ID: req.ID, Error: &RPCError{Code: code, Message: msg}}
}

func (g *Gateway) forwardTool(ctx context.Context, req Request) Response {
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(req.Params, &p)
	up, ok := g.tools[p.Name]
	if !ok {
		return g.fail(req, -32602, "unknown tool")
	}
	raw, err := up.Forward(ctx, req)
	if err != nil {
		return g.fail(req, -32603, err.Error())
	}
	return g.ok(req, raw)
}

func (g *Gateway) forwardTask(ctx context.Context, req Request) Response {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(req.Params, &p)
	g.mu.Lock()
	up, ok := g.owners[p.TaskID]
	g.mu.Unlock()
	if !ok {
		return g.fail(req, -32602, "unknown task")
	}
	raw, err := up.Forward(ctx, req)
	if err != nil {
		return g.fail(req, -32603, err.Error())
	}
	return g.ok(req, raw)
}

func (g *Gateway) listIndex() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := make([]string, 0, len(g.owners))
	for id := range g.owners {
		ids = append(ids, id)
	}
	return ids
}

// ServeHTTP decodes one request per POST.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	_ = json.NewEncoder(w).Encode(g.Dispatch(r.Context(), req))
}
