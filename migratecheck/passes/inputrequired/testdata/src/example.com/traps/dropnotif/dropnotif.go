// Package dropnotif is a 2026-07-28 client that accepts the legacy status
// notification from old servers and drops it: compliant, no finding.
package dropnotif

type message struct {
	Method string
	Params []byte
}

type logger struct{}

func (logger) Debug(msg string, args ...any) {}

type conn struct{}

func (conn) AddNotificationHandler(method string, h func(params []byte)) {}

type client struct {
	log logger
}

func (c *client) onMessage(m message) error {
	switch m.Method {
	case "notifications/tasks/status":
		// Old servers push this unasked; we poll tasks/get instead.
	case "notifications/tasks":
		return c.update(m.Params)
	}
	if m.Method == "notifications/tasks/status" {
		c.log.Debug("dropping legacy status notification")
		return nil
	}
	return nil
}

func (c *client) update(p []byte) error { return nil }

type counter struct{ n int64 }

func (c *counter) Add(n int64) { c.n += n }

type gateway struct {
	dropped counter
	seen    int
}

// filter runs on 2026-07-28 sessions: it counts the legacy status push from
// an upstream and drops it (returns nothing to forward).
func (g *gateway) filter(method string, params []byte) (string, []byte, bool) {
	switch method {
	case "notifications/tasks/status":
		g.dropped.Add(1)
		return "", nil, false
	case "notifications/tasks":
		return method, params, true
	}
	if method == "notifications/tasks/status" {
		g.seen++
		return "", nil, false
	}
	return method, params, true
}

func (c *client) register(k conn) {
	k.AddNotificationHandler("notifications/tasks/status", func(params []byte) {})
}
