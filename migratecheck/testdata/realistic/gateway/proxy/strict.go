package proxy

import "context"

// StrictDispatch is the dispatcher for sessions that negotiated 2026-07-28:
// the methods the tasks extension removed answer METHOD_NOT_FOUND.
func (g *Gateway) StrictDispatch(ctx context.Context, req Request) Response {
	switch req.Method {
	case "tasks/result", "tasks/list":
		return g.fail(req, -32601, "method not found: "+req.Method)
	case "tasks/get", "tasks/cancel", "tasks/update":
		return g.forwardTask(ctx, req)
	}
	return g.Dispatch(ctx, req)
}
