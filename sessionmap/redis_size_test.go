package sessionmap_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// usedMemory is INFO memory's used_memory.
func usedMemory(t *testing.T, info string) int64 {
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no used_memory in INFO")
	return 0
}

// The sizing figures of docs/MIGRATION.md ("Store"): keys and bytes a
// session and a task cost in Redis, measured on a server of the test's own
// (used_memory before and after). A task is one record key plus one member
// in its scope's list and owner set; a session one key.
func TestRedisSizing(t *testing.T) {
	srv := redistest.StartLocal(t)
	ctx := context.Background()
	s := openRedis(t, sessionmap.RedisConfig{URL: srv.URL, Prefix: "size"})
	defer s.Close()
	raw := rawClient(t, srv)
	const sessions, perSession = 200, 10
	before := usedMemory(t, raw.Info(ctx, "memory").Val())
	keys0 := raw.DBSize(ctx).Val()
	for i := range sessions {
		if err := s.CreateSession(ctx, sessionmap.Session{ID: fmt.Sprintf("sess-%032d", i), Era: era.Legacy,
			IdleTimeoutMs: time.Hour.Milliseconds(), ProtocolVersion: "2025-11-25"}); err != nil {
			t.Fatal(err)
		}
	}
	mid := usedMemory(t, raw.Info(ctx, "memory").Val())
	keys1 := raw.DBSize(ctx).Val()
	ttl := time.Hour.Milliseconds()
	for i := range sessions {
		sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer tok-" + strconv.Itoa(i%20)),
			Session: fmt.Sprintf("sess-%032d", i)}
		for range perSession {
			if err := s.CreateTask(ctx, sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
				Origin: sessionmap.OriginUpstreamTask, Method: "tools/call", ToolName: "slow_task", TTLMs: &ttl,
				UpstreamTaskID: sessionmap.NewTaskID()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	after := usedMemory(t, raw.Info(ctx, "memory").Val())
	keys2 := raw.DBSize(ctx).Val()
	perSess := float64(mid-before) / sessions
	perTask := float64(after-mid) / (sessions * perSession)
	t.Logf("per session: %.2f keys, %.0f bytes; per task: %.2f keys (plus index members), %.0f bytes (20 principals' lists, %d sessions' owner sets)",
		float64(keys1-keys0)/sessions, perSess, float64(keys2-keys1-20-sessions)/(sessions*perSession), perTask, sessions)
	if keys1-keys0 != sessions || keys2-keys1 != sessions*perSession+20+sessions {
		t.Errorf("keys: %d for %d sessions, %d for %d tasks; want 1 per session, 1 per task + 1 list per principal + 1 owner set per session",
			keys1-keys0, sessions, keys2-keys1, sessions*perSession)
	}
	if perSess > 1536 || perTask > 2048 {
		t.Errorf("%.0f bytes per session, %.0f per task: more than the bounds docs/MIGRATION.md gives (1.5 KiB, 2 KiB)", perSess, perTask)
	}
}
