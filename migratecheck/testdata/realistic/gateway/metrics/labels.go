// Package metrics turns JSON-RPC method names into bounded metric labels.
package metrics

import "strings"

// known is the allow-list of method labels; everything else is "other" so
// that a misbehaving client cannot blow up the label cardinality. Removed
// methods stay listed so that their (refused) traffic remains visible.
var known = map[string]string{
	"initialize":   "initialize",
	"tools/call":   "tools_call",
	"tasks/get":    "tasks_get",
	"tasks/result": "tasks_result",
	"tasks/list":   "tasks_list",
	"tasks/cancel": "tasks_cancel",
}

// Label returns the metric label for a method.
func Label(method string) string {
	if l, ok := known[method]; ok {
		return l
	}
	if strings.HasPrefix(method, "notifications/") {
		return "notification"
	}
	return "other"
}
