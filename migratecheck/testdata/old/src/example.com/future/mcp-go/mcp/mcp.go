// Package mcp stubs a hypothetical future mcp-go fork that defines
// ResultTypeTask (catalogue §6): messages must suggest re-checking.
package mcp

type ResultType string

const ResultTypeTask ResultType = "task"

type ServerCapabilities struct {
	Extensions map[string]any `json:"extensions,omitempty"`
}
