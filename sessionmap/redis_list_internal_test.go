package sessionmap

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
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

// syncBuffer is a log sink safe for the epoch loop's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A bridge that nobody asks anything still notices that its Redis lost its
// data: it reads the epoch on its own and logs the loss at ERROR.
func TestRedisEpochLoopNoticesLoss(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	prefix := srv.Prefix(t)
	var logs syncBuffer
	r, err := OpenRedis(ctx, RedisConfig{URL: srv.URL, Prefix: prefix},
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), withEpochInterval(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.rdb.Del(ctx, r.keys.epoch()).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "the task store was lost or replaced") {
		if time.Now().After(deadline) {
			t.Fatalf("no ERROR line within 10 s; log:\n%s", logs.String())
		}
		<-time.After(5 * time.Millisecond) // polling the log under the deadline above
	}
	if !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("the loss is not logged at ERROR:\n%s", logs.String())
	}
}
