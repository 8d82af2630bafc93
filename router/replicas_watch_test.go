package router_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/runtime/coord"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// countingTransport counts the tasks/get requests a bridge sends upstream.
type countingTransport struct{ gets atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, err
		}
		if bytes.Contains(body, []byte(`"method":"tasks/get"`)) {
			c.gets.Add(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// endCounter counts the audit log's task.end events of all bridges.
type endCounter struct{ n atomic.Int64 }

func (c *endCounter) Record(e audit.Event) {
	if e.Action == audit.ActionEnd {
		c.n.Add(1)
	}
}

// Three bridges on one Redis (store and coordination under one prefix):
// tasks/result waits for one task on each of them are served by ONE
// upstream watcher — only one bridge reads the task upstream, the others
// relay its snapshots — and every wait gets the result. Only the reader
// records the task's end (L-79: one task.end in the audit log, not one per
// replica).
func TestRedisReplicasShareOneWatcher(t *testing.T) {
	ctx := ctxT(t)
	srv := redistest.Start(t)
	prefix := srv.Prefix(t)
	up := startModern(t)
	var bridges []*bridgeEnv
	var counts []*countingTransport
	ends := &endCounter{}
	for range 3 {
		st, err := sessionmap.OpenRedis(context.Background(), sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix},
			sessionmap.WithLogger(quietLogger()))
		if err != nil {
			t.Fatal(err)
		}
		co := coord.NewRedis(st.Client(), prefix, quietLogger())
		t.Cleanup(func() { _ = co.Close(); _ = st.Close() })
		ct := &countingTransport{}
		counts = append(counts, ct)
		bridges = append(bridges, startBridge(t, router.Config{Upstream: up, Store: st, Coord: co, Transport: ct,
			Legacy: func(c *legacyface.Config) { c.Audit = ends }}))
	}

	c := newLegacyClient(t, bridges[0].url, "replicas-test")
	mustOK(t, "initialize", c.initialize(ctx))
	created := mustOK(t, "tools/call task", c.call(ctx, "tools/call", map[string]any{
		"name": "slow_task", "arguments": map[string]any{"ms": 400, "text": "shared"}, "task": map[string]any{}}))
	id := field(t, created, "task.taskId")

	var wg sync.WaitGroup
	results := make([]reply, len(bridges))
	for i, br := range bridges {
		w := newLegacyClient(t, br.url, "replicas-test")
		w.sid = c.sid
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = w.call(ctx, "tasks/result", map[string]any{"taskId": id})
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.Err != nil || !strings.Contains(string(r.Result), "shared") {
			t.Errorf("tasks/result on bridge %d = %v", i, r)
		}
	}
	pollers := 0
	var got []int64
	for _, ct := range counts {
		n := ct.gets.Load()
		got = append(got, n)
		if n > 0 {
			pollers++
		}
	}
	t.Logf("upstream tasks/get per bridge: %v", got)
	if pollers != 1 {
		t.Fatalf("%d bridges read the task upstream (tasks/get per bridge %v), want 1", pollers, got)
	}
	// The reader records the end right after its durable write, which
	// follows the answers (a terminal state reaches waiters first).
	for deadline := time.Now().Add(10 * time.Second); ends.n.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	for _, br := range bridges {
		_ = br.srv.Close() // waits for its watchers, and so for their sinks
	}
	if n := ends.n.Load(); n != 1 {
		t.Fatalf("audit log: %d task.end events across the bridges, want 1", n)
	}
}
