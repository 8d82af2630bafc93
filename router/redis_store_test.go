package router_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Two bridges on one Redis store (same prefix): a legacy session and its
// task created through A are served by B after A is gone, as after a
// restart on one data directory — the session is rehydrated from the
// shared record, the task read, waited for and listed there.
func TestRedisStoreSessionMovesToAnotherBridge(t *testing.T) {
	ctx := ctxT(t)
	srv := redistest.Start(t)
	prefix := srv.Prefix(t)
	up := startModern(t)
	open := func() sessionmap.Store {
		s, err := sessionmap.OpenRedis(context.Background(), sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix},
			sessionmap.WithLogger(quietLogger()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a := startBridge(t, router.Config{Upstream: up, Store: open()})
	b := startBridge(t, router.Config{Upstream: up, Store: open()})

	c := newLegacyClient(t, a.url, "replica-test")
	mustOK(t, "initialize on A", c.initialize(ctx))
	created := mustOK(t, "tools/call task on A", c.call(ctx, "tools/call", map[string]any{
		"name": "slow_task", "arguments": map[string]any{"ms": 30, "text": "from A"}, "task": map[string]any{}}))
	id := field(t, created, "task.taskId")
	a.hs.CloseClientConnections()
	a.hs.Close() // A is gone

	c.url = b.url
	if st := field(t, mustOK(t, "tasks/get on B", c.call(ctx, "tasks/get", map[string]any{"taskId": id})), "status"); st == "" {
		t.Fatal("tasks/get on B: no status")
	}
	res := mustOK(t, "tasks/result on B", c.call(ctx, "tasks/result", map[string]any{"taskId": id}))
	if !strings.Contains(string(res), "from A") {
		t.Fatalf("tasks/result on B = %s", res)
	}
	var list struct {
		Tasks []struct {
			TaskID string `json:"taskId"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(mustOK(t, "tasks/list on B", c.call(ctx, "tasks/list", nil)), &list); err != nil ||
		len(list.Tasks) != 1 || list.Tasks[0].TaskID != id {
		t.Fatalf("tasks/list on B = %+v, %v", list, err)
	}
	// An id the shared store does not know is still unknown on B.
	c.sid = "not-a-session"
	if r := c.call(ctx, "tasks/list", nil); r.Status != 404 {
		t.Fatalf("unknown session on B: %v, want HTTP 404", r)
	}
}

// A Redis outage: /readyz turns 503 (so a load balancer drains the bridge)
// and a task-augmented call gets a JSON-RPC error, never a task ID that was
// not stored.
func TestRedisStoreOutage(t *testing.T) {
	ctx := ctxT(t)
	srv := redistest.StartLocal(t)
	st, err := sessionmap.OpenRedis(context.Background(), sessionmap.RedisConfig{URL: srv.URL}, sessionmap.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	br := startBridge(t, router.Config{Upstream: startModern(t), Store: st})
	c := newLegacyClient(t, br.url, "outage-test")
	mustOK(t, "initialize", c.initialize(ctx))

	srv.Stop()
	// Probed like a load balancer would: not ready after a few failed checks.
	if code, body := getUntil(t, ctx, br.base+"/readyz", http.StatusServiceUnavailable); code != http.StatusServiceUnavailable || !strings.Contains(body, "store") {
		t.Fatalf("/readyz with Redis down: %d %s", code, body)
	}
	r := c.call(ctx, "tools/call", map[string]any{
		"name": "slow_task", "arguments": map[string]any{"ms": 10, "text": "x"}, "task": map[string]any{}})
	if r.Err == nil || len(r.Result) > 0 {
		t.Fatalf("task-augmented call with Redis down: %v, want a JSON-RPC error and no task", r)
	}
	t.Logf("with Redis down: %v", r)
}
