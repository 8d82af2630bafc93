package router_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// A client naming a task after the Redis store lost its data (restarted
// empty) is told "the bridge lost its task store", not that its task is
// unknown (which it answered before the store had an epoch).
func TestRedisStoreLostTellsClients(t *testing.T) {
	ctx := ctxT(t)
	srv := redistest.Start(t)
	prefix := srv.Prefix(t)
	st, err := sessionmap.OpenRedis(context.Background(), sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix},
		sessionmap.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	b := startBridge(t, router.Config{Upstream: startModern(t), Store: st})
	c := newLegacyClient(t, b.url, "lost-store")
	mustOK(t, "initialize", c.initialize(ctx))
	id := field(t, mustOK(t, "tools/call task", c.call(ctx, "tools/call", map[string]any{
		"name": "echo", "arguments": map[string]any{"text": "x"}, "task": map[string]any{}})), "task.taskId")

	o, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	raw := redis.NewClient(o)
	defer raw.Close()
	keys, err := raw.Keys(ctx, prefix+":*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys under the prefix: %v, %v", keys, err)
	}
	if err := raw.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}

	r := c.call(ctx, "tasks/get", map[string]any{"taskId": id})
	if r.Err == nil || !strings.Contains(r.Err.Message, "the bridge lost its task store") ||
		strings.Contains(strings.ToLower(r.Err.Message), "not found") {
		t.Fatalf("tasks/get after the store was emptied = %v; want the bridge lost its task store", r)
	}
}
