// Package tasks is a test stub of github.com/panyam/mcpkit/ext/tasks, the
// reference implementation of the tasks extension.
package tasks

import "github.com/panyam/mcpkit/server"

type Config struct {
	Server *server.Server
}

func Register(cfg Config) {}
