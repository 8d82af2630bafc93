package agent

import "github.com/mark3labs/mcp-go/mcp"

// clientCapabilities is what the assistant declares in initialize: it
// can sample, list roots and run tool calls as tasks.
func clientCapabilities() mcp.ClientCapabilities {
	caps := mcp.ClientCapabilities{}
	caps.Sampling = &mcp.SamplingCapability{}
	caps.Tasks = mcp.NewTasksCapabilityWithToolsOnly() // want MCP004
	caps.Tasks.Requests.Sampling = &struct {           // want MCP004 MCP013
		CreateMessage *struct{} `json:"createMessage,omitempty"`
	}{CreateMessage: &struct{}{}}
	return caps
}

var _ = clientCapabilities
