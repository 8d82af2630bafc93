// Package engine serves 2025-11-25 sessions from the store.
package engine

import (
	"encoding/json"

	"example.com/kvengine/store"
)

type request struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Handle answers one request.
func Handle(s *store.Store, body []byte) (any, error) {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(req.Params, &p)
	switch req.Method {
	case "tasks/get":
		t, err := s.Load(p.TaskID)
		return t, err
	case "tasks/result": // want MCP001
		return s.Result(p.TaskID)
	}
	return nil, nil
}
