// Package r7 exercises rule R7: legacy _meta keys.
package r7

import "example.com/std/fmt"

const relatedTaskKey = "io.modelcontextprotocol/related-task"

func meta(id string, m map[string]any) map[string]any {
	_ = m[relatedTaskKey]
	m["io.modelcontextprotocol/model-immediate-response"] = "working"
	return map[string]any{
		"io.modelcontextprotocol/related-task": map[string]any{"taskId": id},
	}
}

// Negatives.
func notKeys() {
	fmt.Printf("dropping %s", "io.modelcontextprotocol/related-task")
	keys := []string{relatedTaskKey}
	_ = keys
	_ = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}} // want `^note: advertises the extension`
}
