// Package modern runs mcpkit's extension engine next to its V1 engine (a
// dual server): the advertisement is true, so no MCP014.
package modern

import (
	"github.com/panyam/mcpkit/core"
	"github.com/panyam/mcpkit/ext/tasks"
	"github.com/panyam/mcpkit/server"
)

func New() *server.Server {
	s := server.NewServer("s")
	s.RegisterExtension(core.TasksExtensionID, map[string]any{})
	tasks.Register(tasks.Config{Server: s})
	server.RegisterTasksV1(server.TasksConfigV1{Server: s}) // want `^MCP004: mcpkit server\.RegisterTasksV1 registers mcpkit's 2025-11-25 \(V1\)` `^note: 2025-11-25 engine: mcpkit server\.RegisterTasksV1` `^note: 2025-11-25 engine: mcpkit server\.TasksConfigV1`
	return s
}
