// Package mcp is a test stub of github.com/modelcontextprotocol/go-sdk/mcp
// (v1.4.0+ capability surface; no tasks API).
package mcp

type ServerCapabilities struct {
	Extensions   map[string]any `json:"extensions,omitempty"`
	Experimental map[string]any `json:"experimental,omitempty"`
	Tools        *struct{}      `json:"tools,omitempty"`
}

func (c *ServerCapabilities) AddExtension(name string, settings map[string]any) {
	if c.Extensions == nil {
		c.Extensions = map[string]any{}
	}
	c.Extensions[name] = settings
}

type Server struct{}

func NewServer(name string, caps *ServerCapabilities) *Server { return &Server{} }
