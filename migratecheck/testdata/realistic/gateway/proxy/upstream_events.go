package proxy

import "encoding/json"

// OnUpstreamNotification relays upstream notifications to the clients that
// listen, and pushes task status changes to all of them.
func (g *Gateway) OnUpstreamNotification(method string, params json.RawMessage) {
	if method == notifyTaskStatus {
		for _, l := range g.listeners {
			l(method, params)
		}
		return
	}
	for _, l := range g.listeners {
		l(method, params)
	}
}
