// Package audit labels the requests it records (new code: it never
// dispatches them).
package audit

import "encoding/json"

// Label names a method for the audit trail.
func Label(method string) string {
	switch method {
	case "tasks/result", "tasks/list":
		return "task-legacy"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "task"
	}
	return "other"
}

// Router routes notifications to handlers.
type Router struct {
	handlers map[string]func(json.RawMessage)
}

// On registers a notification handler.
func (r *Router) On(method string, h func(json.RawMessage)) {
	if r.handlers == nil {
		r.handlers = map[string]func(json.RawMessage){}
	}
	r.handlers[method] = h
}

// ignore accepts a notification and drops it.
func ignore(json.RawMessage) {}

// Setup accepts the status notification older servers still push and drops
// it: the extension's notifications/tasks replaces it.
func Setup(r *Router) {
	r.On("notifications/tasks/status", ignore)
	r.On("notifications/tasks", func(json.RawMessage) {})
}
