package main

import (
	"context"
	"errors"
	"testing"
)

// The server under test speaks 2026-07-28 only: tasks/list must be gone.
func TestListIsMethodNotFound(t *testing.T) {
	c := fakeServer(t, map[string]any{"tasks/get": map[string]any{"taskId": "t1", "status": "working"}})
	err := c.call(context.Background(), "tasks/list", nil, nil)
	var rpcErr *rpcError
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32601 {
		t.Fatalf("tasks/list: got %v, want METHOD_NOT_FOUND (-32601)", err)
	}
}
