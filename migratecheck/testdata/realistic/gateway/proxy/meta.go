package proxy

// requestMeta is the _meta object the gateway attaches to requests it sends
// upstream on behalf of a task.
type requestMeta struct {
	ProgressToken any              `json:"progressToken,omitempty"`
	RelatedTask   *relatedTaskMeta `json:"io.modelcontextprotocol/related-task,omitempty"`             // want MCP011
	Immediate     string           `json:"io.modelcontextprotocol/model-immediate-response,omitempty"` // want MCP011
}

type relatedTaskMeta struct {
	TaskID string `json:"taskId"`
}

var _ = requestMeta{}
