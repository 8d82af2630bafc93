// Package metatags writes the legacy _meta keys as struct tags.
package metatags

type relatedTask struct {
	TaskID string `json:"taskId"`
}

// Meta is a request's _meta object.
type Meta struct {
	ProgressToken string       `json:"progressToken,omitempty"`
	RelatedTask   *relatedTask `json:"io.modelcontextprotocol/related-task,omitempty"`             // want `^MCP011: _meta key "io\.modelcontextprotocol/related-task" \(a json tag\) is`
	Immediate     string       `json:"io.modelcontextprotocol/model-immediate-response,omitempty"` // want `^MCP011: _meta key "io\.modelcontextprotocol/model-immediate-response" \(a`
	Client        any          `json:"io.modelcontextprotocol/clientCapabilities,omitempty"`
}
