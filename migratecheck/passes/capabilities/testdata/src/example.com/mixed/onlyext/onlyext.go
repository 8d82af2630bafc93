// Package onlyext advertises the extension and checks the peer's
// declaration, with no legacy engine: no finding.
package onlyext

import "github.com/modelcontextprotocol/go-sdk/mcp"

func caps(peer map[string]any) *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}} // want `^note: advertises the extension`
	if _, ok := peer["io.modelcontextprotocol/tasks"]; ok {
		return c
	}
	return c
}
