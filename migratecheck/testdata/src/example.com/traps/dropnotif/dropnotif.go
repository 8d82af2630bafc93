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

func (c *client) register(k conn) {
	k.AddNotificationHandler("notifications/tasks/status", func(params []byte) {})
}
