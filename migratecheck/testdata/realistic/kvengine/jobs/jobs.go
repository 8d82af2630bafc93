// Package jobs is the job queue's own JSON-RPC API, older than MCP: its
// "tasks/..." namespace shares two names with the 2025-11-25 methods and
// nothing else.
package jobs

import "encoding/json"

type request struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Queue runs jobs.
type Queue struct{ jobs map[string]string }

// Serve answers one request of the queue's API.
func (q *Queue) Serve(body []byte) (any, error) {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	switch req.Method {
	case "tasks/create":
		return q.create(req.Params)
	case "tasks/list":
		return q.jobs, nil
	case "tasks/result":
		return q.jobs[string(req.Params)], nil
	case "tasks/retry":
		return nil, nil
	}
	return nil, nil
}

func (q *Queue) create(p json.RawMessage) (string, error) {
	if q.jobs == nil {
		q.jobs = map[string]string{}
	}
	id := string(p)
	q.jobs[id] = "queued"
	return id, nil
}
