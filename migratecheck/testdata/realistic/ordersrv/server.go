package main

import (
	"github.com/mark3labs/mcp-go/server"

	"example.com/ordersrv/internal/advertise"
)

type config struct {
	Name, Version string
	MaxTasks      int
	Addr          string
}

// newServer wires the tools, the audit hooks and the task engine.
//
// The extension map comes from the shared advertise package, so the
// release notes can claim 2026-07-28 support, but the engine below is still
// mcp-go's 2025-11-25 one.
func newServer(cfg config) *server.MCPServer {
	hooks := &server.Hooks{}
	registerAudit(hooks)
	s := server.NewMCPServer(cfg.Name, cfg.Version,
		server.WithToolCapabilities(true),
		server.WithExtensions(advertise.Extensions()),
		server.WithTaskCapabilities(true, true, true), // want MCP004 MCP002
		server.WithMaxConcurrentTasks(cfg.MaxTasks),
		server.WithHooks(hooks),
	)
	registerTools(s)
	return s
}
