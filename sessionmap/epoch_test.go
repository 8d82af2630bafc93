package sessionmap_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// logBuffer is a concurrency-safe log sink for tests that read the log.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// emptyPrefix deletes every key under prefix, as a Redis restarted without
// its data would have none (only the test's own prefix: nothing is flushed).
func emptyPrefix(t *testing.T, srv *redistest.Server, prefix string) {
	t.Helper()
	ctx := context.Background()
	c := rawClient(t, srv)
	keys, err := c.Keys(ctx, prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) > 0 {
		if err := c.Del(ctx, keys...).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// A Redis that lost its data under a running bridge is noticed: the next
// lookup answers "the bridge lost its task store" (not "not found"), the
// loss is logged at ERROR once, CheckEpoch (readiness) fails, and from then
// on the bridge refuses to write into the new, empty store until it is
// restarted. A bridge started afterwards (a new replica, or this one
// restarted) adopts the new epoch and works, and replicas accept each
// other's tasks/list cursors. Before epochs the lookups said "not found"
// and nothing was logged.
func TestRedisStoreLostIsNoticed(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	prefix := srv.Prefix(t)
	cfg := sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix}
	var logs logBuffer
	a := openRedis(t, cfg, sessionmap.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer a.Close()
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer lost"), Session: "s1"}
	task := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern, Origin: sessionmap.OriginSynthesized}
	if err := a.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateSession(ctx, sessionmap.Session{ID: "s1", Principal: sc.Principal, Era: era.Legacy}); err != nil {
		t.Fatal(err)
	}
	if err := a.CheckEpoch(ctx); err != nil {
		t.Fatalf("CheckEpoch on an intact store: %v", err)
	}
	if _, err := a.GetTask(ctx, sc, sessionmap.NewTaskID()); err != sessionmap.ErrNotFound {
		t.Fatalf("unknown id on an intact store: %v, want the bare ErrNotFound", err)
	}

	emptyPrefix(t, srv, prefix)

	_, err := a.GetTask(ctx, sc, task.ID)
	if !errors.Is(err, sessionmap.ErrStoreLost) || !strings.Contains(err.Error(), "the bridge lost its task store") ||
		strings.Contains(err.Error(), srv.Addr) {
		t.Fatalf("GetTask after the store was emptied = %v; want ErrStoreLost in words for a client (no address)", err)
	}
	if _, err := a.GetSession(ctx, sc); !errors.Is(err, sessionmap.ErrStoreLost) {
		t.Fatalf("GetSession after the loss = %v", err)
	}
	if err := a.CheckEpoch(ctx); !errors.Is(err, sessionmap.ErrStoreLost) || !strings.Contains(err.Error(), "restart") {
		t.Fatalf("CheckEpoch after the loss = %v", err)
	}
	if err := a.CreateTask(ctx, sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
		Origin: sessionmap.OriginSynthesized}); !errors.Is(err, sessionmap.ErrStoreLost) {
		t.Fatalf("CreateTask after the loss = %v, want ErrStoreLost until restart", err)
	}
	if _, err := a.ListTasks(ctx, sc, 10, ""); !errors.Is(err, sessionmap.ErrStoreLost) {
		t.Fatalf("ListTasks after the loss = %v", err)
	}
	out := logs.String()
	if n := strings.Count(out, "the task store was lost or replaced"); n != 1 || !strings.Contains(out, "level=ERROR") {
		t.Fatalf("want one ERROR line about the loss, got %d:\n%s", n, out)
	}

	// A replica started now, and this bridge restarted, share the new epoch
	// and the new cursor secret.
	b := openRedis(t, cfg)
	defer b.Close()
	a2 := openRedis(t, cfg)
	defer a2.Close()
	for range 3 {
		if err := b.CreateTask(ctx, sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
			Origin: sessionmap.OriginSynthesized}); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []struct{ from, to *sessionmap.Redis }{{b, a2}, {a2, b}} {
		p, err := x.from.ListTasks(ctx, sc, 2, "")
		if err != nil || p.NextCursor == "" {
			t.Fatalf("first page: %v", err)
		}
		if q, err := x.to.ListTasks(ctx, sc, 2, p.NextCursor); err != nil || len(q.Tasks) != 1 {
			t.Fatalf("a replica's cursor on another: %d tasks, %v", len(q.Tasks), err)
		}
	}
	if err := a2.CheckEpoch(ctx); err != nil {
		t.Fatalf("the restarted bridge: %v", err)
	}
	if err := a.CheckEpoch(ctx); !errors.Is(err, sessionmap.ErrStoreLost) {
		t.Fatalf("the bridge that saw the loss adopted the new epoch without a restart: %v", err)
	}
}

// An epoch that changed (another store behind the same address) is a loss
// too, and the log says which epoch it found.
func TestRedisStoreReplacedIsNoticed(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	prefix := srv.Prefix(t)
	var logs logBuffer
	a := openRedis(t, sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix},
		sessionmap.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer a.Close()
	if err := rawClient(t, srv).Set(ctx, prefix+":meta:epoch", "0123456789abcdef0123456789abcdef", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := a.CheckEpoch(ctx); !errors.Is(err, sessionmap.ErrStoreLost) || !strings.Contains(err.Error(), "0123456789abcdef0123456789abcdef") {
		t.Fatalf("CheckEpoch after the epoch changed = %v", err)
	}
	if !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("no ERROR line:\n%s", logs.String())
	}
}

// Badger keeps its epoch across restarts, and a store written before epochs
// gets one on its first read-write open.
func TestBadgerEpochStable(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for range 2 {
		s, err := sessionmap.OpenBadger(dir, sessionmap.WithGCInterval(0), sessionmap.WithLogger(quietLogger()))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CheckEpoch(ctx); err != nil {
			t.Fatalf("CheckEpoch: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	ro, err := sessionmap.OpenBadger(dir, sessionmap.ReadOnly(), sessionmap.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.CheckEpoch(ctx); err != nil {
		t.Fatalf("read-only CheckEpoch: %v", err)
	}
}
