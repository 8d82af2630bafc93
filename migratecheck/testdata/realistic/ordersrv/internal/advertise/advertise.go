// Package advertise builds the capability extensions every service of the
// shop announces, so that they stay in sync.
package advertise

// TasksExtension is the extension identifier of MCP 2026-07-28 tasks.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Extensions returns the extensions map for server.WithExtensions.
func Extensions() map[string]any {
	return map[string]any{
		TasksExtension:      map[string]any{},
		"com.example/audit": map[string]any{"level": "full"},
	}
}
