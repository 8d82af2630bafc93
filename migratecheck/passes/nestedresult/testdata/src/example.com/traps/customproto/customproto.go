// Package customproto speaks a job API of its own whose "tasks/..."
// namespace predates MCP: not MCP, not reported.
package customproto

func serve(method string) any {
	switch method {
	case "tasks/create", "tasks/retry":
		return nil
	case "tasks/list":
		return []string{}
	case "tasks/result":
		return "done"
	}
	return nil
}
