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
	s.RegisterExtension(core.TasksExtensionID, map[string]any{}) // want `^note: advertises the extension`
	tasks.Register(tasks.Config{Server: s})
	server.RegisterTasksV1(server.TasksConfigV1{Server: s})
	return s
}
