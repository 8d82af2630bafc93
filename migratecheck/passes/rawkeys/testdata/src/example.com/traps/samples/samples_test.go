package samples

import "testing"

type event struct{ Method string }

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
}

type rpcError struct{ Code int }

// call stands for a request to a 2026-07-28 server.
func call(r rpcRequest) *rpcError { return &rpcError{Code: -32601} }

func assertRejected(t *testing.T, e *rpcError) {
	if e == nil || e.Code != -32601 {
		t.Error("not rejected")
	}
}

func TestMatch(t *testing.T) {
	for _, ev := range []event{{Method: "notifications/tasks/status"}, {Method: "tasks/list"}} {
		if Match("notifications/tasks", ev.Method) != (ev.Method == "notifications/tasks/status") {
			t.Error(ev.Method)
		}
	}
}

func TestRemoved(t *testing.T) {
	for _, r := range []rpcRequest{{JSONRPC: "2.0", Method: "tasks/list"}, {JSONRPC: "2.0", Method: "tasks/result"}} {
		assertRejected(t, call(r))
	}
}
