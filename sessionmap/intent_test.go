package sessionmap_test

import (
	"context"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Every backend keeps create intents (the record `bridge tasks orphans`
// reads): put, list oldest first, delete, expiry after IntentTTL, and a
// record survives a reopen (it is written durably, before the upstream
// call).
func TestIntents(t *testing.T) {
	backends := map[string]func(t *testing.T, clock func() time.Time) func() sessionmap.IntentStore{
		"memory": func(t *testing.T, clock func() time.Time) func() sessionmap.IntentStore {
			m := sessionmap.NewMemory(sessionmap.WithClock(clock))
			return func() sessionmap.IntentStore { return m }
		},
		"badger": func(t *testing.T, clock func() time.Time) func() sessionmap.IntentStore {
			dir := t.TempDir()
			var cur *sessionmap.Badger
			return func() sessionmap.IntentStore {
				if cur != nil {
					_ = cur.Close()
				}
				s, err := sessionmap.OpenBadger(dir, sessionmap.WithClock(clock), sessionmap.WithGCInterval(0),
					sessionmap.WithLogger(quietLogger()))
				if err != nil {
					t.Fatalf("OpenBadger: %v", err)
				}
				cur = s
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
		},
		"redis": func(t *testing.T, clock func() time.Time) func() sessionmap.IntentStore {
			srv := redistest.Start(t)
			cfg := sessionmap.RedisConfig{URL: srv.URL, Prefix: srv.Prefix(t)}
			return func() sessionmap.IntentStore {
				s := openRedis(t, cfg, sessionmap.WithClock(clock))
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
		},
	}
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Date(2026, 7, 28, 10, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			reopen := open(t, clock)
			s := reopen()
			sc := sessionmap.Scope{Principal: "p1", Session: "s1"}
			a := sessionmap.Intent{ID: sessionmap.NewTaskID(), Scope: sc, Upstream: "http://up/mcp", RequestID: "7", ToolName: "slow"}
			if err := s.PutIntent(ctx, a); err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Second)
			b := sessionmap.Intent{ID: sessionmap.NewTaskID(), Scope: sc, ToolName: "other", UpstreamTaskID: "up-1", Outcome: sessionmap.IntentCancelled}
			if err := s.PutIntent(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := s.PutIntent(ctx, sessionmap.Intent{}); err == nil {
				t.Fatal("an intent without an id was stored")
			}
			s = reopen()
			all, err := s.AllIntents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID || all[0].ToolName != "slow" ||
				all[0].Scope != sc || all[0].RequestID != "7" || all[1].UpstreamTaskID != "up-1" ||
				all[1].Outcome != sessionmap.IntentCancelled || !all[0].CreatedAt.Equal(now.Add(-time.Second)) {
				t.Fatalf("AllIntents = %+v", all)
			}
			// A put settles (deletes) earlier intents in the same write.
			now = now.Add(time.Second)
			c := sessionmap.Intent{ID: sessionmap.NewTaskID(), Scope: sc, ToolName: "third"}
			if err := s.PutIntent(ctx, c, a.ID, "unknown"); err != nil {
				t.Fatal(err)
			}
			if all, _ = s.AllIntents(ctx); len(all) != 2 || all[0].ID != b.ID || all[1].ID != c.ID {
				t.Fatalf("after a settling put: %+v", all)
			}
			if err := s.DeleteIntents(ctx, c.ID, "unknown"); err != nil {
				t.Fatal(err)
			}
			if all, _ = s.AllIntents(ctx); len(all) != 1 || all[0].ID != b.ID {
				t.Fatalf("after delete: %+v", all)
			}
			now = now.Add(sessionmap.IntentTTL)
			if all, _ = s.AllIntents(ctx); len(all) != 0 {
				t.Fatalf("after IntentTTL: %+v", all)
			}
		})
	}
}
