package sessionmap_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/sessionmap/storetest"
)

func openRedis(t testing.TB, cfg sessionmap.RedisConfig, opts ...sessionmap.Option) *sessionmap.Redis {
	t.Helper()
	opts = append([]sessionmap.Option{sessionmap.WithLogger(quietLogger())}, opts...)
	s, err := sessionmap.OpenRedis(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatalf("OpenRedis: %v", err)
	}
	return s
}

// rawClient is a plain client on the test Redis, to look at what the store
// wrote.
func rawClient(t testing.TB, srv *redistest.Server) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRedisConformance(t *testing.T) {
	srv := redistest.Start(t)
	storetest.Run(t, func(t *testing.T, clock func() time.Time) func() sessionmap.Store {
		cfg := sessionmap.RedisConfig{URL: srv.URL, Prefix: srv.Prefix(t)}
		return func() sessionmap.Store { return openRedis(t, cfg, sessionmap.WithClock(clock)) }
	})
}

// Two bridges with different prefixes on one Redis database see nothing of
// each other: not the same task id, not lists, not the admin view, not
// cursors; one with the same prefix (a replica) sees everything.
func TestRedisPrefixesIsolate(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	pa, pb := srv.Prefix(t), srv.Prefix(t)
	a := openRedis(t, sessionmap.RedisConfig{URL: srv.URL, Prefix: pa})
	b := openRedis(t, sessionmap.RedisConfig{URL: srv.URL, Prefix: pb})
	a2 := openRedis(t, sessionmap.RedisConfig{URL: srv.URL, Prefix: pa})
	for _, s := range []*sessionmap.Redis{a, b, a2} {
		t.Cleanup(func() { _ = s.Close() })
	}
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer shared"), Session: "s"}
	id := sessionmap.NewTaskID()
	mk := func(msg string) sessionmap.Task {
		return sessionmap.Task{ID: id, Scope: sc, Direction: sessionmap.LegacyToModern,
			Origin: sessionmap.OriginUpstreamTask, StatusMessage: msg}
	}
	if err := a.CreateTask(ctx, mk("in a")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetTask(ctx, sc, id); err != sessionmap.ErrNotFound {
		t.Fatalf("prefix b sees prefix a's task: %v", err)
	}
	if err := b.CreateTask(ctx, mk("in b")); err != nil {
		t.Fatalf("same id under another prefix: %v", err)
	}
	for _, x := range []struct {
		s    *sessionmap.Redis
		want string
	}{{a, "in a"}, {b, "in b"}, {a2, "in a"}} {
		got, err := x.s.GetTask(ctx, sc, id)
		if err != nil || got.StatusMessage != x.want {
			t.Fatalf("prefix %s: GetTask = %q, %v; want %q", x.s.Prefix(), got.StatusMessage, err, x.want)
		}
	}
	for range 2 {
		if err := a.CreateTask(ctx, sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc,
			Direction: sessionmap.LegacyToModern, Origin: sessionmap.OriginUpstreamTask}); err != nil {
			t.Fatal(err)
		}
	}
	pageA, err := a.ListTasks(ctx, sc, 1, "")
	if err != nil || pageA.NextCursor == "" {
		t.Fatalf("ListTasks a = %+v, %v", pageA, err)
	}
	if all, err := b.AllTasks(ctx, sessionmap.TaskFilter{}); err != nil || len(all) != 1 {
		t.Fatalf("b.AllTasks = %d tasks, %v; want only its own 1", len(all), err)
	}
	if all, err := a2.AllTasks(ctx, sessionmap.TaskFilter{}); err != nil || len(all) != 3 {
		t.Fatalf("replica a2.AllTasks = %d tasks, %v; want 3", len(all), err)
	}
	// A replica honours the other's cursor (one shared secret); another
	// bridge does not (its own secret).
	if _, err := a2.ListTasks(ctx, sc, 1, pageA.NextCursor); err != nil {
		t.Fatalf("replica rejects a cursor of its peer: %v", err)
	}
	if _, err := b.ListTasks(ctx, sc, 1, pageA.NextCursor); err != sessionmap.ErrInvalidCursor {
		t.Fatalf("prefix b accepted prefix a's cursor: %v", err)
	}
	if _, err := sessionmap.OpenRedis(ctx, sessionmap.RedisConfig{URL: srv.URL, Prefix: "a:b"}); err == nil ||
		!strings.Contains(err.Error(), "prefix") {
		t.Fatalf("prefix with ':' = %v, want a refusal", err)
	}
}

// keysUnder lists the keys of a prefix other than the store's metadata.
func keysUnder(t *testing.T, c *redis.Client, prefix string) []string {
	t.Helper()
	var out []string
	it := c.Scan(context.Background(), 0, prefix+":*", 1000).Iterator()
	for it.Next(context.Background()) {
		if !strings.HasPrefix(it.Val(), prefix+":meta:") {
			out = append(out, it.Val())
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// Redis itself expires records and index entries at the task's TTL, on
// Redis's clock: nothing needs a GC loop (L-64, L-75).
func TestRedisExpiresOnItsOwn(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	prefix := srv.Prefix(t)
	s := openRedis(t, sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix})
	t.Cleanup(func() { _ = s.Close() })
	raw := rawClient(t, srv)

	const ttl = 400 * time.Millisecond
	ms := ttl.Milliseconds()
	sc := sessionmap.Scope{Session: "expiring"}
	short := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
		Origin: sessionmap.OriginUpstreamTask, TTLMs: &ms}
	if err := s.CreateTask(ctx, short); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(ctx, sessionmap.Session{ID: "expiring", Era: era.Legacy, IdleTimeoutMs: ms}); err != nil {
		t.Fatal(err)
	}
	keys := keysUnder(t, raw, prefix)
	if len(keys) != 4 { // session, task, list index, owner index
		t.Fatalf("keys after create = %q, want 4", keys)
	}
	for _, k := range keys {
		if pttl := raw.PTTL(ctx, k).Val(); pttl <= 0 || pttl > ttl {
			t.Fatalf("%s: PTTL %v, want in (0, %v]", k, pttl, ttl)
		}
	}
	// A task without a TTL in the same scope keeps the index keys alive.
	forever := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
		Origin: sessionmap.OriginUpstreamTask}
	if err := s.CreateTask(ctx, forever); err != nil {
		t.Fatal(err)
	}
	// Redis's expiry is the clock here: poll with a deadline for it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := keysUnder(t, raw, prefix)
		if len(left) == 3 {
			for _, k := range left {
				if strings.Contains(k, ":t:") && !strings.HasSuffix(k, forever.ID+"}") {
					t.Fatalf("the expired task's record is still there: %q", left)
				}
				if pttl := raw.PTTL(ctx, k).Val(); pttl != -1 {
					t.Fatalf("%s: PTTL %v after an unlimited task joined, want none", k, pttl)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Redis did not expire the short task and session: keys %q", left)
		}
		time.Sleep(20 * time.Millisecond) // polling Redis's clock, not synchronising goroutines
	}
	// The list prunes the dangling index entry of the expired task.
	p, err := s.ListTasks(ctx, sc, 10, "")
	if err != nil || len(p.Tasks) != 1 || p.Tasks[0].ID != forever.ID {
		t.Fatalf("ListTasks = %+v, %v", p, err)
	}
	if n := raw.ZCard(ctx, keysWith(keysUnder(t, raw, prefix), ":i:")).Val(); n != 1 {
		t.Fatalf("list index holds %d entries after listing, want 1", n)
	}
}

func keysWith(keys []string, part string) string {
	for _, k := range keys {
		if strings.Contains(k, part) {
			return k
		}
	}
	return ""
}

// --redis-wait-replicas: a write returns once WAIT saw N replicas, and a
// shortfall is a clear error, never a silent success.
func TestRedisWaitReplicas(t *testing.T) {
	primary := redistest.StartLocal(t)
	ctx := context.Background()
	sc := sessionmap.Scope{Session: "w"}
	task := func() sessionmap.Task {
		return sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
			Origin: sessionmap.OriginUpstreamTask}
	}
	cfg := func(n int) sessionmap.RedisConfig {
		// A shortfall is retried for FailoverTimeout (a failover may be
		// under way); short here, so each shortfall case fails fast.
		return sessionmap.RedisConfig{URL: primary.URL, Prefix: "w", WaitReplicas: n, WaitTimeout: 200 * time.Millisecond,
			FailoverTimeout: 300 * time.Millisecond}
	}
	none := openRedis(t, cfg(0))
	t.Cleanup(func() { _ = none.Close() })
	if err := none.CreateTask(ctx, task()); err != nil {
		t.Fatalf("N=0: %v", err)
	}
	one := openRedis(t, cfg(1))
	t.Cleanup(func() { _ = one.Close() })
	lost := task()
	err := one.CreateTask(ctx, lost)
	if !errors.Is(err, sessionmap.ErrNotReplicated) || !strings.Contains(err.Error(), "0 of 1 replicas") ||
		!strings.Contains(err.Error(), primary.Addr) {
		t.Fatalf("N=1 without a replica: %v, want ErrNotReplicated naming 0 of 1 and %s", err, primary.Addr)
	}

	// A call that writes nothing waits for no replica.
	if _, err := one.UpdateStatus(ctx, sc, lost.ID, sessionmap.Snapshot{Status: sessionmap.StatusWorking}); err != nil {
		t.Fatalf("no-op UpdateStatus N=1 without a replica: %v", err)
	}
	// An input answer that did not reach the replicas is not left recorded:
	// the caller sends nothing now and must find the key fresh next time,
	// or the input would never be answered.
	if _, err := one.RecordAnswered(ctx, sc, lost.ID, []string{"elicit-1"}); !errors.Is(err, sessionmap.ErrNotReplicated) {
		t.Fatalf("RecordAnswered N=1 without a replica: %v", err)
	}
	if fresh, err := none.RecordAnswered(ctx, sc, lost.ID, []string{"elicit-1"}); err != nil || !slices.Equal(fresh, []string{"elicit-1"}) {
		t.Fatalf("RecordAnswered after a shortfall = %v, %v; want the key fresh again", fresh, err)
	}

	redistest.StartReplica(t, primary)
	// A generous timeout where the replica must answer: on a busy machine it
	// may take a while to be scheduled; the shortfall cases keep the short one.
	oneCfg := cfg(1)
	oneCfg.WaitTimeout = 10 * time.Second
	one = openRedis(t, oneCfg)
	t.Cleanup(func() { _ = one.Close() })
	ok := task()
	if err := one.CreateTask(ctx, ok); err != nil {
		t.Fatalf("N=1 with a replica: %v", err)
	}
	if _, err := one.PinCancel(ctx, sc, ok.ID); err != nil {
		t.Fatalf("N=1 with a replica, PinCancel: %v", err)
	}
	two := openRedis(t, cfg(2))
	t.Cleanup(func() { _ = two.Close() })
	if _, err := two.UpdateStatus(ctx, sc, lost.ID, sessionmap.Snapshot{Status: sessionmap.StatusInputRequired}); !errors.Is(err, sessionmap.ErrNotReplicated) ||
		!strings.Contains(err.Error(), "1 of 2 replicas") {
		t.Fatalf("N=2 with one replica: %v, want ErrNotReplicated naming 1 of 2", err)
	}
}

// A Redis that is not there, or a wrong URL, is a clear error that names
// the address and never shows the password.
func TestRedisOpenErrors(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	const password = "s3cr3t-pa55"
	for _, tc := range []struct{ url, want string }{
		{"redis://:" + password + "@" + dead + "/3", dead + " (database 3)"},
		{"rediss://user:" + password + "@" + dead + "/0", dead},
		{"redis://user:" + password + "@" + dead + "/x", "is not a number"},
		{"redis://user:" + password + "@host:port:x/0", "redis://[USER:PASSWORD@]HOST:PORT/DB"},
		{"http://user:" + password + "@" + dead, "redis://[USER:PASSWORD@]HOST:PORT/DB"},
		{"redis://" + dead + "/0?bogus=1", "takes no query"},
	} {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		s, err := sessionmap.OpenRedis(cctx, sessionmap.RedisConfig{URL: tc.url})
		cancel()
		if err == nil {
			_ = s.Close()
			t.Fatalf("%s: opened", sessionmap.RedactURL(tc.url))
		}
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), password) {
			t.Fatalf("%s: error %q, want it to name %q and never the password", sessionmap.RedactURL(tc.url), err, tc.want)
		}
	}
	// A wrong password against a real server: refused, password not echoed.
	srv := redistest.Start(t)
	wrong := strings.Replace(srv.URL, "redis://", "redis://nobody:"+password+"@", 1)
	if _, err := sessionmap.OpenRedis(ctx, sessionmap.RedisConfig{URL: wrong}); err == nil || strings.Contains(err.Error(), password) ||
		!strings.Contains(err.Error(), srv.Addr) {
		t.Fatalf("wrong password: %v", err)
	}
	if got := sessionmap.RedactURL("redis://u:" + password + "@h:1/0"); strings.Contains(got, password) {
		t.Fatalf("RedactURL = %q", got)
	}
}

// A closed store answers ErrClosed; the data stays for the next open.
func TestRedisClosed(t *testing.T) {
	srv := redistest.Start(t)
	cfg := sessionmap.RedisConfig{URL: srv.URL, Prefix: srv.Prefix(t)}
	s := openRedis(t, cfg)
	ctx := context.Background()
	sc := sessionmap.Scope{Session: "c"}
	id := sessionmap.NewTaskID()
	if err := s.CreateTask(ctx, sessionmap.Task{ID: id, Scope: sc, Direction: sessionmap.LegacyToModern,
		Origin: sessionmap.OriginUpstreamTask}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTask(ctx, sc, id); !errors.Is(err, sessionmap.ErrClosed) {
		t.Fatalf("GetTask after Close = %v", err)
	}
	ro := openRedis(t, cfg, sessionmap.ReadOnly())
	t.Cleanup(func() { _ = ro.Close() })
	if got, err := ro.LookupTask(ctx, id); err != nil || got.ID != id {
		t.Fatalf("read-only LookupTask = %+v, %v", got, err)
	}
	if err := ro.CreateTask(ctx, sessionmap.Task{ID: "x", Scope: sc, Direction: sessionmap.LegacyToModern,
		Origin: sessionmap.OriginUpstreamTask}); !errors.Is(err, sessionmap.ErrReadOnly) {
		t.Fatalf("read-only CreateTask = %v", err)
	}
}
