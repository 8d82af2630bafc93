package legacyface_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/identity"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/runtime/coord"
	"github.com/tasksbridge/tasksbridge/runtime/credseal"
	"github.com/tasksbridge/tasksbridge/runtime/upcred"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Three replicas on one Redis, each with its own credential keeper (one
// sealing key): alice's token A expires while her tasks run; her wait on
// one replica is told so; her refreshed token B reaches only another
// replica, whose store record and fan-out message make the watchers poll
// with B; the tasks complete and a third replica delivers the results.
// Redis never holds a token byte.
func TestTokenRefreshAcrossReplicasOnRedis(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	up := startUpstream(t, demo.Options{})
	gate := &tokenGate{next: up.rec, subj: map[string]string{}}
	for tok, sub := range subjects {
		gate.allow(tok, sub)
	}
	ghs := httptest.NewServer(gate)
	t.Cleanup(ghs.Close)
	target := ghs.URL + "/mcp"

	srv := redistest.Start(t)
	prefix := srv.Prefix(t)
	key := make([]byte, credseal.KeySize)
	_, _ = rand.Read(key)
	seal, err := credseal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for range 3 {
		st, err := sessionmap.OpenRedis(ctx, sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix}, sessionmap.WithLogger(quietLogger()))
		if err != nil {
			t.Fatal(err)
		}
		co := coord.NewRedis(st.Client(), st.Prefix(), quietLogger())
		keeper := upcred.New(upcred.Config{Upstream: target, Store: st, Sealer: seal, Fanout: co, Logger: quietLogger()})
		if err := keeper.Start(ctx); err != nil {
			t.Fatal(err)
		}
		wc := fastWatch()
		wc.DisablePush = true
		wc.Coord = co
		// Watchers stay warm (and their leases held) for the whole test:
		// a replica's waiter hears of the lease holder's refusal itself.
		wc.IdleTimeout = 2 * time.Minute
		cfg := legacyface.Config{UpstreamClient: modernup.NewHTTP(target, &http.Client{Transport: authErrRT{next: http.DefaultTransport}}),
			Store: st, Logger: quietLogger(), Watch: wc, Credentials: keeper}
		cfg.Outbox.Leases = co
		b, err := legacyface.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mux := b.Mux()
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if sub, ok := subjects[r.Header.Get("Authorization")]; ok {
				r = r.WithContext(upcred.WithPrincipal(r.Context(), identity.Principal{
					ID: sessionmap.PrincipalFromMTLSSubject("test-issuer\x00" + sub)}))
			}
			mux.ServeHTTP(w, r)
		}))
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = b.Shutdown(sctx)
			hs.Close()
			_ = b.Close()
			keeper.Close()
			_ = co.Close()
			_ = st.Close()
		})
		urls = append(urls, hs.URL+"/mcp")
	}

	c := newRawClient(t, urls[0])
	c.authz = "Bearer alice-A"
	c.initialize(ctx, nil)
	var ids []string
	for i := range 3 {
		ids = append(ids, taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task",
			"arguments": map[string]any{"ms": 30000 + 1000*i, "text": "late"}, "task": map[string]any{}})))
	}
	// Replica 0 reads the task first: its watcher holds the task's lease
	// and polls it for every replica.
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": ids[0]})); s != "working" {
		t.Fatalf("task %s", s)
	}
	gate.revoke("Bearer alice-A")

	// Replica 1 waits on the task with A: its watcher follows replica 0's,
	// which finds no usable credential, and the wait is told so.
	c.url = urls[1]
	r := c.call(ctx, "tasks/result", map[string]any{"taskId": ids[0]})
	if r.Err == nil || r.Err.Code != legacyface.CodeAuthorizationExpired {
		t.Fatalf("tasks/result on replica 1 with the expired token: HTTP %d %s", r.Status, r.Envelope)
	}
	// B reaches replica 2 only, with a request that reads no task.
	c.url, c.authz = urls[2], "Bearer alice-B"
	if r := c.call(ctx, "tools/list", nil); r.Err != nil {
		t.Fatalf("tools/list on replica 2: %s", r.Envelope)
	}
	// The task completes upstream; the watcher that ran out of credentials
	// (replica 0's, still warm) polls with B and records the end.
	up.clock.Advance(40 * time.Second)
	view, err := sessionmap.OpenRedis(ctx, sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix},
		sessionmap.WithLogger(quietLogger()), sessionmap.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	waitFor(t, ctx, func() bool {
		rec, err := view.LookupTask(ctx, ids[0])
		return err == nil && rec.Status == sessionmap.StatusCompleted
	}, "the task to complete with the refreshed token (no request of the client in between)")

	// Replica 0 delivers every result with B.
	c.url = urls[0]
	for _, id := range ids {
		if got := resultText(t, c.call(ctx, "tasks/result", map[string]any{"taskId": id})); got != "late" {
			t.Fatalf("result %q", got)
		}
	}
	gets := gate.seenGets()
	if last := gets[len(gets)-1]; last != "Bearer alice-B" {
		t.Fatalf("the last tasks/get carried %q", last)
	}

	// Nothing in Redis holds a token.
	o, _ := redis.ParseURL(srv.URL)
	rc := redis.NewClient(o)
	defer rc.Close()
	n := 0
	it := rc.Scan(ctx, 0, prefix+":*", 1000).Iterator()
	for it.Next(ctx) {
		k := it.Val()
		var vals []string
		switch rc.Type(ctx, k).Val() {
		case "string":
			vals = []string{rc.Get(ctx, k).Val()}
		case "hash":
			for _, v := range rc.HGetAll(ctx, k).Val() {
				vals = append(vals, v)
			}
		case "zset":
			vals = rc.ZRange(ctx, k, 0, -1).Val()
		case "set":
			vals = rc.SMembers(ctx, k).Val()
		case "list":
			vals = rc.LRange(ctx, k, 0, -1).Val()
		case "stream":
			for _, m := range rc.XRange(ctx, k, "-", "+").Val() {
				for _, v := range m.Values {
					if s, ok := v.(string); ok {
						vals = append(vals, s)
					}
				}
			}
		}
		for _, v := range append(vals, k) {
			n++
			for _, tok := range []string{"alice-A", "alice-B"} {
				if bytes.Contains([]byte(v), []byte(tok)) {
					t.Fatalf("Redis key %s holds the token %s", k, tok)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("the Redis dump is empty")
	}
}
