// Package server stubs the future fork's server package.
package server

import _ "example.com/future/mcp-go/mcp"

type ServerOption func()

func WithExtensions(extensions map[string]any) ServerOption              { return nil }
func WithTaskCapabilities(list, cancel, toolCallTasks bool) ServerOption { return nil }
