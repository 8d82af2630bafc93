package v2

import (
	"encoding/json"
	"testing"
)

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Method  string `json:"method"`
}

type rpcError struct {
	Code int `json:"code"`
}

const codeNotFound = -32601

// call sends one request to the engine and returns its error, if any.
func call(req rpcRequest) *rpcError {
	if _, err := json.Marshal(req); err != nil {
		return &rpcError{Code: -32700}
	}
	if Handle(req.Method, nil) == nil {
		return &rpcError{Code: codeNotFound}
	}
	return nil
}

// assertRejected fails unless the engine refused the method.
func assertRejected(t *testing.T, e *rpcError, method string) {
	t.Helper()
	if e == nil || e.Code != codeNotFound {
		t.Errorf("%s: got %v, want an error with code %d", method, e, codeNotFound)
	}
}

func TestRemovedMethods(t *testing.T) {
	for _, req := range []rpcRequest{
		{JSONRPC: "2.0", ID: 1, Method: "tasks/list"},
		{JSONRPC: "2.0", ID: 2, Method: "tasks/result"},
	} {
		assertRejected(t, call(req), req.Method)
	}
}
