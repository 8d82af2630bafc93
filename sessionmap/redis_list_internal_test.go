package sessionmap

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/tasksbridge/tasksbridge/internal/redistest"
)

// roundTrips counts what the client sends to Redis: one per command, one
// per pipeline or transaction (whatever it holds), not counting the
// handshake of a connection the pool opens.
type roundTrips struct{ n atomic.Int64 }

func (c *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch cmd.Name() {
		case "hello", "auth", "client", "select", "role", "ping":
			// a new pooled connection's handshake, not the operation's
		default:
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (c *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n.Add(1); return next(ctx, cmds) }
}

// A page of 50 tasks with their whole records costs a constant number of
// round trips to Redis (the index range, then one pipeline of GETs), not one
// per task: with Redis 200 ms away, tasks/list took 10 s per page when the
// face read each listed task again.
func TestRedisListFullRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	r, err := OpenRedis(ctx, RedisConfig{URL: srv.URL, Prefix: srv.Prefix(t)},
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc := Scope{Principal: PrincipalFromAuthorization("Bearer rt"), Session: "s"}
	for range 51 {
		if err := r.CreateTask(ctx, Task{ID: NewTaskID(), Scope: sc, Direction: LegacyToModern, Origin: OriginSynthesized}); err != nil {
			t.Fatal(err)
		}
	}
	var c roundTrips
	r.rdb.AddHook(&c)
	p, err := r.ListTasksFull(ctx, sc, 50, "")
	if err != nil || len(p.Tasks) != 50 || p.NextCursor == "" {
		t.Fatalf("ListTasksFull = %d tasks, cursor %q, %v", len(p.Tasks), p.NextCursor, err)
	}
	if n := c.n.Load(); n > 2 {
		t.Fatalf("a page of 50 whole tasks took %d round trips to Redis, want at most 2", n)
	}
}
