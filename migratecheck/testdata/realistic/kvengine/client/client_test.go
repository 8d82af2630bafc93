package client

import "testing"

func TestServerDeclaresTasks(t *testing.T) {
	caps := map[string]any{}
	if got := initialize(); got != nil {
		caps = got
	}
	if _, ok := caps["tasks"]; !ok { // want MCP004
		t.Skip("server without tasks")
	}
}

func initialize() map[string]any {
	return map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"list": map[string]any{}}} // want MCP004
}
