// Package samples filters notification names generically.
package samples

import "strings"

// Match reports whether method has the prefix.
func Match(prefix, method string) bool { return strings.HasPrefix(method, prefix) }

// Label names a method for the audit trail.
func Label(method string) string {
	switch method {
	case "tasks/result", "tasks/list":
		return "task-legacy"
	}
	return "other"
}

// Router registers notification handlers.
type Router struct{}

// On registers h for method.
func (Router) On(method string, h func([]byte)) {}

func drop([]byte) {}

// Setup drops the legacy status notification.
func Setup(r Router) { r.On("notifications/tasks/status", drop) }
