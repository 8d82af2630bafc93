package main

import (
	"encoding/json"
	"fmt"
)

type notification struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// printEvent prints server notifications while "taskctl watch" runs.
func printEvent(n notification) {
	switch n.Method {
	case statusPush:
		var p struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		}
		_ = json.Unmarshal(n.Params, &p)
		fmt.Printf("%s is now %s\n", p.TaskID, p.Status)
	default:
		fmt.Printf("event %s\n", n.Method)
	}
}
