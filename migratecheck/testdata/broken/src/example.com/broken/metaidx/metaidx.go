// Package metaidx does not type-check: it indexes an undefined value with a
// legacy _meta key. Every pass must tolerate the missing type information.
package metaidx

func RelatedTask() any {
	return undefinedMeta["io.modelcontextprotocol/related-task"]
}

func Params() map[string]any {
	return map[string]any{"_meta": undefinedMeta, "task": undefinedParams{"ttl": 1}}
}

var _ = undefinedCaps["tasks"]

type Task struct {
	TaskID string        `json:"taskId"`
	Status string        `json:"status"`
	TTL    undefinedType `json:"ttl"`
}

func Dispatch(req undefinedRequest) {
	switch req.Method {
	case "tasks/result":
		undefinedReply(req, Task{})
	}
}
