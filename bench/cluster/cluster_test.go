package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// pollInterval is the upstream's pollIntervalMs: the bridge watcher's floor,
// so replicas run with production watch settings and still answer fast.
const pollInterval = 100 * time.Millisecond

// startCluster builds the bridge and starts 3 replicas on a Redis of their
// own behind the round-robin proxy. Replica logs are shown if the test fails.
func startCluster(t *testing.T) *Cluster {
	t.Helper()
	// The Redis of $TASKSBRIDGE_REDIS_URL under a fresh prefix, or one of
	// the test's own.
	rs := redistest.Start(t)
	return startClusterOn(t, rs.URL, rs.Prefix(t))
}

// startClusterOn is startCluster on the store URL given (any topology).
func startClusterOn(t *testing.T, storeURL, prefix string, args ...string) *Cluster {
	t.Helper()
	// Fail early (or skip, outside CI) when the TypeScript client is missing.
	peers.TSScript(t, "chaos-client.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A plain build: the replicas' code runs under -race in the packages'
	// own tests; here what is tested is several processes sharing a store.
	bin, err := BuildBridge(ctx, t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	c, err := Start(ctx, Options{Bridge: bin, Replicas: 3, Dir: t.TempDir(), Stderr: logs,
		RedisURL: storeURL, RedisPrefix: prefix,
		Upstream: demo.Options{PollInterval: pollInterval}, Args: append([]string{"--log-level", "warn"}, args...)})
	if err != nil {
		t.Fatalf("start the cluster: %v\nreplica logs:\n%s", err, logs.String())
	}
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			t.Logf("replica logs:\n%s", logs.String())
		}
	})
	return c
}

// tsArgs are the TypeScript legacy client's flags for the embedded
// upstream: failed tasks answer tasks/result with a JSON-RPC error, and the
// SDK's own poll interval never slows a task without one.
var tsArgs = []string{"--expect-fail", "error", "--default-poll-ms", "50"}

// TestThreeReplicasTSLegacyFlow is the multi-replica acceptance test: three
// `bridge serve` processes share one Redis (--store redis://) behind a
// round-robin proxy without affinity, so consecutive requests of the
// official TypeScript SDK legacy client land on different replicas:
// initialize on one, tools/call on the next, tasks/get, tasks/result,
// tasks/list and tasks/cancel on others. Every step of the legacy flow must
// pass (create, poll, result, the streamed call, a plain call, list, cancel,
// a failed task, an isError result) and every replica must have served.
// Input requests on the tasks/result stream are TestThreeReplicasTSInput.
func TestThreeReplicasTSLegacyFlow(t *testing.T) {
	c := startCluster(t)
	rep := peers.RunTSClient(t, c.URL, peers.ClientOptions{
		Steps:   []string{"init", "list", "task", "stream", "plain", "tasklist", "cancel", "fail", "iserror"},
		Args:    tsArgs,
		Timeout: 45 * time.Second,
	})
	rep.Require(t)
	requireSpread(t, c)
}

// inputReason names what TestThreeReplicasTSInput needs from the bridge. It
// is empty once a replica that relays an input request on its tasks/result
// stream receives the client's answer even when the load balancer delivers
// that POST to another replica.
const inputReason = ""

// TestThreeReplicasTSInput: elicitation and sampling on the tasks/result
// stream across replicas. The input request goes out on the stream of the
// replica holding the tasks/result; the client's answer is a POST that the
// round-robin proxy delivers to the next replica. The task must complete
// with the answer, and the upstream must receive each answer exactly once.
func TestThreeReplicasTSInput(t *testing.T) {
	if inputReason != "" {
		t.Skip(inputReason)
	}
	c := startCluster(t)
	rep := peers.RunTSClient(t, c.URL, peers.ClientOptions{
		Steps:   []string{"init", "list", "elicit", "sample"},
		Args:    tsArgs,
		Timeout: 45 * time.Second,
	})
	rep.Require(t)
	up := c.Upstream.Counters()
	if up.InputResponses != 2 || up.DuplicateKeys != 0 || up.UnknownKeys != 0 {
		t.Errorf("upstream input answers: accepted %d, duplicates %d, unknown %d; want 2, 0, 0 (each answered exactly once)",
			up.InputResponses, up.DuplicateKeys, up.UnknownKeys)
	}
	requireSpread(t, c)
}

// requireSpread fails unless every replica served part of the client's
// requests: the proxy really spread one session over all of them.
func requireSpread(t *testing.T, c *Cluster) {
	t.Helper()
	counts, _ := c.Proxy.Counts()
	for i, n := range counts {
		if n == 0 {
			t.Errorf("replica %d served no request (per replica: %v): the proxy did not spread the client", i, counts)
		}
	}
	t.Logf("requests per replica: %v", counts)
}

// TestKillReplicaHoldingTasksResult: the replica holding a client's blocking
// tasks/result stream is killed with SIGKILL while the task still runs. The
// SDK reconnects with Last-Event-ID (the stream was primed with an event id),
// the proxy sends that GET to another replica, and the client gets the
// answer well before its 60 s request timeout.
func TestKillReplicaHoldingTasksResult(t *testing.T) {
	c := startCluster(t)

	var mu sync.Mutex
	holder := -1
	c.Proxy.OnRequest(func(backend int, r *http.Request) {
		if r.Method != http.MethodPost || r.GetBody == nil {
			return
		}
		b, _ := r.GetBody()
		body, _ := io.ReadAll(b)
		if bytes.Contains(body, []byte(`"tasks/result"`)) {
			mu.Lock()
			holder = backend
			mu.Unlock()
		}
	})

	node := peers.Node(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, peers.TSScript(t, "chaos-client.mjs"), "--mode", "resume",
		"--slow-ms", "4000", "--request-timeout-ms", "60000", c.URL)
	cmd.Dir = filepath.Join(peers.Dir(t), "ts")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()

	var killedAt time.Time
	var result struct {
		Event   string `json:"event"`
		OK      bool   `json:"ok"`
		Ms      int64  `json:"ms"`
		Text    string `json:"text"`
		Error   string `json:"error"`
		Timeout bool   `json:"timeout"`
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var line struct {
			Event string `json:"event"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Event {
		case "streaming":
			if !killedAt.IsZero() {
				continue // the resumed stream
			}
			mu.Lock()
			victim := holder
			mu.Unlock()
			if victim < 0 {
				t.Fatal("the tasks/result stream opened, but the proxy saw no tasks/result request")
			}
			if err := c.Kill(victim); err != nil {
				t.Fatalf("kill -9 replica %d: %v", victim, err)
			}
			killedAt = time.Now()
			t.Logf("killed replica %d (holding the tasks/result stream)", victim)
		case "result":
			_ = json.Unmarshal(sc.Bytes(), &result)
		}
	}
	if killedAt.IsZero() {
		t.Fatalf("the client never opened a tasks/result stream; stderr:\n%s", stderr.String())
	}
	if result.Event == "" {
		t.Fatalf("the client printed no result; stderr:\n%s", stderr.String())
	}
	if !result.OK {
		t.Fatalf("tasks/result after the kill: %+v (timed out: %v), want the completed result", result, result.Timeout)
	}
	// The task ends 4 s after creation; the SDK's first reconnect waits 1 s.
	// 15 s is far below the 60 s timeout the client would otherwise hit.
	if waited := time.Since(killedAt); waited > 15*time.Second {
		t.Errorf("the answer came %v after the kill, want well before the 60 s request timeout", waited)
	}
	t.Logf("result %q %d ms after tasks/result was sent", result.Text, result.Ms)
}

// syncBuffer is a concurrency-safe output capture.
type syncBuffer = syncbuf.Buffer
