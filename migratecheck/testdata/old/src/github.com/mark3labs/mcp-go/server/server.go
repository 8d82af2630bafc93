// Package server is a test stub of github.com/mark3labs/mcp-go/server v0.47.0.
package server

type MCPServer struct{}

type ServerOption func(*MCPServer)

func NewMCPServer(name, version string, opts ...ServerOption) *MCPServer { return nil }

func WithTaskCapabilities(list, cancel, toolCallTasks bool) ServerOption { return nil }
