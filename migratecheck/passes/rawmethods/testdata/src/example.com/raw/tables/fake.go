package tables // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

// fakeServer answers each request with the canned reply for its method.
func fakeServer(replies map[string]any) func(req request) any {
	return func(req request) any {
		return replies[req.Method]
	}
}

// withDefaults hands its table on to fakeServer (a table sink of a table
// sink).
func withDefaults(replies map[string]any) func(req request) any {
	replies["ping"] = struct{}{}
	return fakeServer(replies)
}

// allowed is a metrics-label allow-list: looking it up by the method serves
// nothing.
func allowed(labels map[string]bool, method string) bool { return labels[method] }

// count counts requests per method.
func count(counts map[string]int, req request) { counts[req.Method]++ }

// call and callT: a method name passed through two helpers, as test files do.
func call(method string) request { return send(method, nil) }

func callT(method string) request { return call(method) }

func fakeUses() {
	_ = fakeServer(map[string]any{"tasks/result": map[string]any{}})        // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(as a key of a`
	_ = withDefaults(map[string]any{"tasks/list": map[string]any{}})        // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(as a key of a`
	_ = callT("tasks/result")                                               // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(passed as the`
	_ = allowed(map[string]bool{"tasks/list": true}, "tools/call")          // a metrics allow-list: not reported
	count(map[string]int{"tasks/result": 0}, request{Method: "tools/call"}) // a counter: not reported
}
