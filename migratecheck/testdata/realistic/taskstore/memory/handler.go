package memory

import "encoding/json"

// Handle answers the extension's task methods; a tools/call that starts a
// task answers with the flat CreateTaskResult (resultType "task").
func (s *Store) Handle(method string, params json.RawMessage) (any, int) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(params, &p)
	switch method {
	case "tasks/get":
		t, ok := s.Get(p.TaskID)
		if !ok {
			return nil, -32602
		}
		return map[string]any{
			"resultType": "complete",
			"taskId":     t.TaskID,
			"status":     t.Status,
			"createdAt":  t.CreatedAt,
			"ttlMs":      t.TTLMs,
		}, 0
	case "tasks/update":
		return map[string]any{}, 0
	case "tasks/result", "tasks/list":
		return nil, -32601
	}
	return nil, -32601
}

// Created is the answer to a tools/call that became a task.
func Created(t Task) map[string]any {
	return map[string]any{"resultType": "task", "taskId": t.TaskID, "status": t.Status, "ttlMs": t.TTLMs}
}
