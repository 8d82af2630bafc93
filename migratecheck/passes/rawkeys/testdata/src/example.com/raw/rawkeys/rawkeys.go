// Package rawkeys reads and writes the legacy keys of hand-decoded JSON.
package rawkeys

// poll reads a task object decoded into a map.
func poll(task map[string]any) (string, float64) {
	id, _ := task["taskId"].(string)
	wait, _ := task["pollInterval"].(float64) // want `^MCP007: raw JSON key "pollInterval" read from a task object is the`
	return id, wait
}

// expire writes a task object's time to live.
func expire(task map[string]any, ms int64) {
	task["status"] = "working"
	task["ttl"] = ms // want `^MCP006: raw JSON key "ttl" written to a task object is the legacy Task`
}

// newTask builds a task object literal.
func newTask(id string) map[string]any {
	return map[string]any{"taskId": id, "status": "working", "ttl": 60000} // want `^MCP006: raw JSON key "ttl" written to a task object is the legacy Task`
}

// hint reads the task hint of received tools/call params.
func hint(params map[string]any) any {
	_ = params["name"]
	return params["task"] // want `^MCP005: params "task" read from tools/call params is the removed`
}

// declaresTasks reads a server's capabilities.
func declaresTasks(caps map[string]any) bool {
	_, ok := caps["tasks"] // want `^MCP004: capabilities "tasks" read from a capabilities map is the`
	return ok
}

// cacheTTL is a cache entry's ttl: no task key, not a task.
func cacheTTL(entry map[string]any) any { return entry["ttl"] }

// todo reads "tasks" from a to-do document, not capabilities.
func todo(doc map[string]any) any { return doc["tasks"] }
