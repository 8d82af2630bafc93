package sessionmap_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/sessionmap/storetest"
)

// The Sentinel and Cluster setups are started once for this test binary
// (on first use) and stopped here.
func TestMain(m *testing.M) {
	code := m.Run()
	redistest.StopShared()
	os.Exit(code)
}

func freshPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "tbtest-" + hex.EncodeToString(b[:])
}

// haTopologies are the store URLs of the shared Sentinel and Cluster setups.
func haTopologies(t *testing.T) map[string]string {
	return map[string]string{
		"Sentinel": redistest.SharedSentinel(t).URL,
		"Cluster":  redistest.SharedCluster(t).URL,
	}
}

// The whole store contract on a Sentinel-managed primary and on a 3-primary
// Redis Cluster: every script and transaction stays in one slot (a
// CROSSSLOT would fail the suite), lists and the admin view cross nodes.
func TestRedisConformanceHA(t *testing.T) {
	for name, url := range haTopologies(t) {
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, clock func() time.Time) func() sessionmap.Store {
				cfg := sessionmap.RedisConfig{URL: url, Prefix: freshPrefix()}
				return func() sessionmap.Store { return openRedis(t, cfg, sessionmap.WithClock(clock)) }
			})
		})
	}
}

func TestEventStoreRedisHA(t *testing.T) {
	for name, url := range haTopologies(t) {
		t.Run(name, func(t *testing.T) {
			st := openRedis(t, sessionmap.RedisConfig{URL: url, Prefix: freshPrefix()})
			defer st.Close()
			eventStoreContract(t, st)
		})
	}
}

// The admin view (SCAN) sees the keys of every Cluster node.
func TestRedisClusterAdminSeesEveryNode(t *testing.T) {
	cl := redistest.SharedCluster(t)
	ctx := context.Background()
	s := openRedis(t, sessionmap.RedisConfig{URL: cl.URL, Prefix: freshPrefix()})
	defer s.Close()
	want := map[string]bool{}
	for i := range 60 {
		sc := sessionmap.Scope{Session: "s" + string(rune('a'+i%20))}
		id := sessionmap.NewTaskID()
		want[id] = true
		if err := s.CreateTask(ctx, sessionmap.Task{ID: id, Scope: sc, Direction: sessionmap.LegacyToModern,
			Origin: sessionmap.OriginUpstreamTask}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.AllTasks(ctx, sessionmap.TaskFilter{})
	if err != nil || len(all) != len(want) {
		t.Fatalf("AllTasks = %d tasks, %v; want %d", len(all), err, len(want))
	}
	// They really are spread: every node holds some of the records.
	for _, n := range cl.Nodes {
		c := redis.NewClient(&redis.Options{Addr: n.Addr})
		keys, err := c.Keys(ctx, s.Prefix()+":t:*").Result()
		_ = c.Close()
		if err != nil || len(keys) == 0 {
			t.Fatalf("node %s holds %d task records (%v); want some", n.Addr, len(keys), err)
		}
	}
}

// Data of key layout 1 (before hash tags) is refused with a message that
// says to drain it, and nothing under the prefix is changed.
func TestRedisRefusesLayout1(t *testing.T) {
	srv := redistest.Start(t)
	prefix := srv.Prefix(t)
	raw := rawClient(t, srv)
	ctx := context.Background()
	if err := raw.Set(ctx, prefix+":meta:layout", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := raw.Set(ctx, prefix+":t:oldtask", "old record", 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := sessionmap.OpenRedis(ctx, sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix})
	if !errors.Is(err, sessionmap.ErrUnsupportedVersion) || !strings.Contains(err.Error(), "Drain it first") ||
		!strings.Contains(err.Error(), "--redis-prefix") {
		t.Fatalf("open on layout 1 = %v; want ErrUnsupportedVersion saying how to drain", err)
	}
	if v := raw.Get(ctx, prefix+":meta:layout").Val(); v != "1" {
		t.Fatalf("layout key now %q, want it untouched", v)
	}
	if v := raw.Get(ctx, prefix+":t:oldtask").Val(); v != "old record" {
		t.Fatalf("old record now %q, want it untouched", v)
	}
	// The documented way out: a new prefix on the same Redis.
	s := openRedis(t, sessionmap.RedisConfig{URL: srv.URL, Prefix: srv.Prefix(t)})
	_ = s.Close()
}

// The URL forms of the three topologies, and errors that never show a
// password.
func TestParseRedisURL(t *testing.T) {
	const pw = "p%40ss-w0rd"
	for _, tc := range []struct {
		url  string
		want sessionmap.RedisTarget
	}{
		{"redis://h:1/2", sessionmap.RedisTarget{Kind: "single", Addrs: []string{"h:1"}, DB: 2}},
		{"rediss://u:" + pw + "@h:1", sessionmap.RedisTarget{Kind: "single", Addrs: []string{"h:1"}, User: "u", Password: "p@ss-w0rd", TLS: true}},
		{"redis+sentinel://:" + pw + "@a:1,b:2,c/mymaster/3", sessionmap.RedisTarget{Kind: "sentinel",
			Addrs: []string{"a:1", "b:2", "c:26379"}, Master: "mymaster", DB: 3, Password: "p@ss-w0rd"}},
		{"rediss+cluster://u@a:1,b:2", sessionmap.RedisTarget{Kind: "cluster", Addrs: []string{"a:1", "b:2"}, User: "u", TLS: true}},
		{"redis+cluster://a:1/0", sessionmap.RedisTarget{Kind: "cluster", Addrs: []string{"a:1"}}},
	} {
		got, err := sessionmap.ParseRedisURL(tc.url)
		if err != nil || got.Kind != tc.want.Kind || strings.Join(got.Addrs, ",") != strings.Join(tc.want.Addrs, ",") ||
			got.Master != tc.want.Master || got.DB != tc.want.DB || got.User != tc.want.User ||
			got.Password != tc.want.Password || got.TLS != tc.want.TLS {
			t.Errorf("ParseRedisURL(%s) = %+v, %v; want %+v", sessionmap.RedactURL(tc.url), got, err, tc.want)
		}
		if r := sessionmap.RedactURL(tc.url); strings.Contains(r, pw) {
			t.Errorf("RedactURL shows the password: %s", r)
		}
	}
	for _, bad := range []string{
		"redis://:" + pw + "@a:1,b:2/0",            // several servers need sentinel or cluster
		"redis+sentinel://:" + pw + "@a:1,b:2",     // no master name
		"redis+cluster://:" + pw + "@a:1/3",        // cluster has db 0 only
		"redis+sentinel://:" + pw + "@a:1/m/x",     // bad db
		"redis://:" + pw + "@a:99999/0",            // bad port
		"redis://:" + pw + "@a:1/0?password=" + pw, // no query
		"memcached://:" + pw + "@a:1",              // not redis
	} {
		_, err := sessionmap.ParseRedisURL(bad)
		if err == nil || strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "p@ss") {
			t.Errorf("ParseRedisURL(bad %s) = %v; want an error without the password", sessionmap.RedactURL(bad), err)
		}
	}
}

// writers create tasks and move them to completed until stop is closed;
// they record every task whose create (and completion) was acknowledged,
// every error, and the longest time one call took (the stall a client
// sees).
type writers struct {
	mu        sync.Mutex
	created   map[string]sessionmap.Scope
	completed map[string]bool
	errs      []error
	maxCall   time.Duration
	done      chan struct{} // closed when every writer stopped
}

func runWriters(ctx context.Context, s *sessionmap.Redis, n int, stop <-chan struct{}) *writers {
	w := &writers{created: map[string]sessionmap.Scope{}, completed: map[string]bool{}, done: make(chan struct{})}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := sessionmap.Scope{Session: "writer-" + string(rune('a'+i))}
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				id := sessionmap.NewTaskID()
				t0 := time.Now()
				err := s.CreateTask(ctx, sessionmap.Task{ID: id, Scope: sc, Direction: sessionmap.LegacyToModern,
					Origin: sessionmap.OriginUpstreamTask})
				d := time.Since(t0)
				w.mu.Lock()
				w.maxCall = max(w.maxCall, d)
				if err != nil {
					w.errs = append(w.errs, err)
					w.mu.Unlock()
					continue
				}
				w.created[id] = sc
				w.mu.Unlock()
				if k%2 == 0 {
					t0 = time.Now()
					_, err := s.UpdateStatus(ctx, sc, id, sessionmap.Snapshot{Status: sessionmap.StatusCompleted})
					d := time.Since(t0)
					w.mu.Lock()
					w.maxCall = max(w.maxCall, d)
					if err != nil {
						w.errs = append(w.errs, err)
					} else {
						w.completed[id] = true
					}
					w.mu.Unlock()
				}
			}
		}()
	}
	go func() { wg.Wait(); close(w.done) }()
	return w
}

// check reads back every acknowledged task and its acknowledged status.
func (w *writers) check(t *testing.T, ctx context.Context, s *sessionmap.Redis) {
	t.Helper()
	<-w.done
	lost, wrong := 0, 0
	for id, sc := range w.created {
		got, err := s.GetTask(ctx, sc, id)
		if err != nil {
			lost++
			t.Errorf("acknowledged task %s lost: %v", id, err)
			continue
		}
		if w.completed[id] && got.Status != sessionmap.StatusCompleted {
			wrong++
			t.Errorf("task %s: status %s, its completion was acknowledged", id, got.Status)
		}
	}
	for _, e := range w.errs {
		t.Errorf("client-visible error: %v", e)
	}
	t.Logf("%d tasks acknowledged (%d completions), %d lost, %d wrong, %d errors, longest call %s",
		len(w.created), len(w.completed), lost, wrong, len(w.errs), w.maxCall.Round(time.Millisecond))
	if len(w.created) == 0 {
		t.Fatal("no task was acknowledged at all")
	}
}

// A Sentinel failover (the primary killed with SIGKILL, the replica
// promoted, the old primary back as a replica) with --redis-wait-replicas 1
// while writers run: every write stalls (bounded by FailoverTimeout) and
// then succeeds; no acknowledged task or status is lost.
func TestRedisSentinelFailoverLosesNothing(t *testing.T) {
	sen := redistest.SharedSentinel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := openRedis(t, sessionmap.RedisConfig{URL: sen.URL, Prefix: freshPrefix(), WaitReplicas: 1,
		WaitTimeout: time.Second, FailoverTimeout: 30 * time.Second})
	defer s.Close()
	stop := make(chan struct{})
	w := runWriters(ctx, s, 4, stop)
	waitAcked(t, w, 20)
	_, took, err := sen.Failover(ctx, 300*time.Millisecond)
	if err != nil {
		close(stop)
		t.Fatal(err)
	}
	n := ackedCount(w)
	waitAcked(t, w, n+20) // writes go on after the failover
	close(stop)
	w.check(t, ctx, s)
	t.Logf("sentinels promoted the replica %s after the kill", took.Round(time.Millisecond))
}

// A Cluster node killed and restarted (its AOF keeps what it acknowledged),
// then a few slots moved with redis-cli --cluster reshard, while writers
// run: the calls routed to the node stall, MOVED and ASK are followed, and
// no acknowledged task or status is lost.
func TestRedisClusterRestartAndReshardLoseNothing(t *testing.T) {
	cl := redistest.SharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s := openRedis(t, sessionmap.RedisConfig{URL: cl.URL, Prefix: freshPrefix(), FailoverTimeout: 30 * time.Second})
	defer s.Close()
	stop := make(chan struct{})
	w := runWriters(ctx, s, 4, stop)
	waitAcked(t, w, 20)
	cl.Nodes[1].Kill()
	if err := cl.Nodes[1].Restart(); err != nil {
		close(stop)
		t.Fatal(err)
	}
	if err := cl.WaitOK(30 * time.Second); err != nil {
		close(stop)
		t.Fatal(err)
	}
	waitAcked(t, w, ackedCount(w)+20)
	if err := cl.Reshard(ctx, 0, 2, 200); err != nil {
		close(stop)
		t.Fatal(err)
	}
	waitAcked(t, w, ackedCount(w)+20)
	close(stop)
	w.check(t, ctx, s)
}

func ackedCount(w *writers) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.created)
}

func waitAcked(t *testing.T, w *writers, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for ackedCount(w) < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d tasks acknowledged, waited for %d", ackedCount(w), n)
		}
		time.Sleep(10 * time.Millisecond) // polling progress with a deadline
	}
}
