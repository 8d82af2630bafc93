package proxy

import "encoding/json"

// FilterForModernClient is used on sessions that negotiated 2026-07-28: the
// legacy status push is accepted from the upstream and dropped, because a
// modern client only receives notifications/tasks for the tasks it
// subscribed to.
func (g *Gateway) FilterForModernClient(method string, params json.RawMessage) (string, json.RawMessage, bool) {
	switch method {
	case "notifications/tasks/status":
		g.dropped.Add(1)
		return "", nil, false
	case "notifications/tasks":
		return method, params, true
	}
	return method, params, true
}
