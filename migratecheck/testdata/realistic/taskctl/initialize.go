package main

import "context"

// clientCapabilities is the capabilities object taskctl sends in
// initialize. It mirrors the client half of the schema by hand.
type clientCapabilities struct {
	Roots *struct {
		ListChanged bool `json:"listChanged,omitempty"`
	} `json:"roots,omitempty"`
	Sampling    *struct{}        `json:"sampling,omitempty"`
	Elicitation *struct{}        `json:"elicitation,omitempty"`
	Tasks       *clientTasksCaps `json:"tasks,omitempty"` // want MCP004
}

type clientTasksCaps struct {
	List   *struct{} `json:"list,omitempty"`
	Cancel *struct{} `json:"cancel,omitempty"`
}

func initialize(ctx context.Context, c *conn) error {
	caps := clientCapabilities{Tasks: &clientTasksCaps{List: &struct{}{}, Cancel: &struct{}{}}}
	return c.call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    caps,
		"clientInfo":      map[string]string{"name": "taskctl", "version": "0.4.1"},
	}, nil)
}

var _ = initialize
