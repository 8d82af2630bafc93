package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// fakeServer answers every request with a canned result per method.
func fakeServer(t *testing.T, results map[string]any) *conn {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req rpcRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
			return
		}
		res, ok := results[req.Method]
		if !ok {
			_ = json.NewEncoder(w).Encode(map[string]any{"error": rpcError{Code: -32601, Message: "method not found"}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"result": res})
	}))
	t.Cleanup(srv.Close)
	return &conn{url: srv.URL, http: srv.Client()}
}

// rpcRequestT performs one call against c and fails the test on error.
func rpcRequestT(t *testing.T, c *conn, method string, params any) json.RawMessage {
	t.Helper()
	raw, err := c.sendRequest(context.Background(), method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return raw
}

func TestResultReturnsContent(t *testing.T) {
	c := fakeServer(t, map[string]any{"tasks/result": map[string]any{"content": []any{}}}) // want MCP001
	raw := rpcRequestT(t, c, "tasks/result", map[string]string{"taskId": "t1"})            // want MCP001
	if len(raw) == 0 {
		t.Fatal("empty result")
	}
}
