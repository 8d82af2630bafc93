package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/interop/peers"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// twoReplicas runs two bridges (as two replicas) on one shared store in front
// of one legacy upstream, and a modern client of the same principal on each.
func twoReplicas(t *testing.T, fo legacyfixture.Options, tweakA ...func(*modernface.Options)) (fx *legacyfixture.Server, a, b *rawClient) {
	t.Helper()
	fx = legacyfixture.New(fo)
	up, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	a, b = replicasOf(t, up, tweakA...)
	return fx, a, b
}

// replicasOf runs two bridges on one shared store in front of upstream up.
func replicasOf(t *testing.T, up string, tweakA ...func(*modernface.Options)) (a, b *rawClient) {
	t.Helper()
	st := sessionmap.NewMemory()
	t.Cleanup(func() { _ = st.Close() })
	cfgA := router.Config{Upstream: up, UpstreamEra: "legacy", Store: st}
	for _, f := range tweakA {
		cfgA.Modern = f
	}
	ra := startBridge(t, cfgA)
	rb := startBridge(t, router.Config{Upstream: up, UpstreamEra: "legacy", Store: st})
	a = newModernClient(t, ra.url, "replicated-app")
	b = newModernClient(t, rb.url, "replicated-app")
	a.authz, b.authz = "Bearer alice-token", "Bearer alice-token"
	return a, b
}

// upstreamTally counts what reaches a legacy upstream through countingProxy.
type upstreamTally struct {
	initializes, answers, taskCalls atomic.Int64
}

// countingProxy forwards to target and counts initialize requests, the
// JSON-RPC responses POSTed to the upstream (input answers) and task-augmented
// tools/call requests.
func countingProxy(t *testing.T, target string) (string, *upstreamTally) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tally := &upstreamTally{}
	// The request keeps its own path; SSE streams are flushed as they come.
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.FlushInterval = -1
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "cannot read body", http.StatusBadRequest)
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Task json.RawMessage `json:"task"`
				} `json:"params"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(body, &m) == nil {
				switch {
				case m.Method == "initialize":
					tally.initializes.Add(1)
				case m.Method == "tools/call" && m.Params.Task != nil:
					tally.taskCalls.Add(1)
				case m.Method == "" && len(m.ID) > 0 && (m.Result != nil || m.Error != nil):
					tally.answers.Add(1)
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL + u.Path, tally
}

// pollTask polls tasks/get through c until cond holds (at the client's poll
// interval) and returns the last result.
func pollTask(t *testing.T, ctx context.Context, c *rawClient, id string, cond func(json.RawMessage) bool) json.RawMessage {
	t.Helper()
	for {
		res := mustOK(t, "tasks/get", c.call(ctx, "tasks/get", map[string]any{"taskId": id}))
		if cond(res) {
			return res
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task never reached the expected state; last %s", res)
		case <-time.After(20 * time.Millisecond): // the client's poll interval, not synchronisation
		}
	}
}

func statusOf(t *testing.T, want ...string) func(json.RawMessage) bool {
	return func(res json.RawMessage) bool { return slices.Contains(want, field(t, res, "status")) }
}

func inputKeys(t *testing.T, res json.RawMessage) []string {
	t.Helper()
	var r struct {
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range r.InputRequests {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func accept(content map[string]any) map[string]any {
	return map[string]any{"action": "accept", "content": content}
}

// Modern clients in front of a legacy server, two replicas on one store: a
// task created through one replica is polled, answered and cancelled through
// the other; the principal's upstream session is initialized once for both,
// and every input request is answered upstream exactly once.
func TestModernClientsAnyReplicaLegacyUpstream(t *testing.T) {
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	up, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	proxied, tally := countingProxy(t, up)
	a, b := replicasOf(t, proxied)
	replicaFlow(t, a, b, tally, 1000)
	if st := fx.Stats(); st.Initializes != 1 || st.Responses != 2 || st.TasksCreated != 2 {
		t.Errorf("the fixture saw %d initializes, %d answers, %d tasks; want 1, 2, 2", st.Initializes, st.Responses, st.TasksCreated)
	}
}

// The same against the TypeScript SDK 1.32.2 legacy server.
func TestModernClientsAnyReplicaTypeScriptLegacyServer(t *testing.T) {
	srv := peers.StartTSServer(t, peers.TSServerOptions{PollMs: 50, TimeScale: 0.2})
	proxied, tally := countingProxy(t, srv.URL)
	a, b := replicasOf(t, proxied)
	replicaFlow(t, a, b, tally, 250)
}

// replicaFlow: task 1 (two questions) created through A, its questions seen
// through both, one answered through B, cancelled through A; task 2 (one
// question) created through B, polled and answered through A, completed on
// both. Tools that take delayMs ask that late, after their CreateTaskResult
// (one that asks at once may be answered with an MRTR round instead, M-54).
func replicaFlow(t *testing.T, a, b *rawClient, tally *upstreamTally, delayMs int) {
	t.Helper()
	ctx := ctxT(t)

	// Task 1 through A; its two questions arrive on A's upstream tasks/result
	// stream (A polls it first).
	created := mustOK(t, "tools/call through A", a.call(ctx, "tools/call", map[string]any{
		"name": "multi_input", "arguments": map[string]any{"delayMs": delayMs}}))
	id := field(t, created, "taskId")
	if id == "" || field(t, created, "resultType") != "task" {
		t.Fatalf("tools/call through A: %s; want a task", created)
	}
	onA := pollTask(t, ctx, a, id, func(res json.RawMessage) bool { return len(inputKeys(t, res)) == 2 || terminal(t, res) })
	keys := inputKeys(t, onA)
	if len(keys) != 2 {
		t.Fatalf("input requests through A: %s; want 2", onA)
	}
	// B sees the same input requests, under the same keys.
	onB := mustOK(t, "tasks/get through B", b.call(ctx, "tasks/get", map[string]any{"taskId": id}))
	if got := field(t, onB, "status"); got != "input_required" || !slices.Equal(inputKeys(t, onB), keys) {
		t.Fatalf("tasks/get through B: status %s, keys %v; want input_required with %v", got, inputKeys(t, onB), keys)
	}
	// One answer through B: A stops asking it.
	mustOK(t, "tasks/update through B", b.call(ctx, "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{keys[0]: accept(map[string]any{"name": "Alice", "confirm": true})}}))
	left := pollTask(t, ctx, a, id, func(res json.RawMessage) bool { return !slices.Contains(inputKeys(t, res), keys[0]) })
	if got := inputKeys(t, left); !slices.Equal(got, keys[1:]) {
		t.Fatalf("input requests through A after B answered %s: %v; want %v", keys[0], got, keys[1:])
	}
	// The same answer again through A is ignored (M-58).
	mustOK(t, "tasks/update through A (again)", a.call(ctx, "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{keys[0]: accept(map[string]any{"name": "Mallory", "confirm": false})}}))
	// Cancel through A; B sees it cancelled.
	mustOK(t, "tasks/cancel through A", a.call(ctx, "tasks/cancel", map[string]any{"taskId": id}))
	pollTask(t, ctx, b, id, statusOf(t, "cancelled"))

	// Task 2 through B, polled and answered through A, completed on both.
	created = mustOK(t, "tools/call through B", b.call(ctx, "tools/call", map[string]any{
		"name": "elicit_task", "arguments": map[string]any{"question": "Your name?", "delayMs": delayMs}}))
	id2 := field(t, created, "taskId")
	if id2 == "" {
		t.Fatalf("tools/call through B: %s; want a task", created)
	}
	keys2 := inputKeys(t, pollTask(t, ctx, b, id2, statusOf(t, "input_required")))
	if len(keys2) != 1 {
		t.Fatalf("input requests of task 2: %v; want 1", keys2)
	}
	mustOK(t, "tasks/update through A", a.call(ctx, "tasks/update", map[string]any{"taskId": id2,
		"inputResponses": map[string]any{keys2[0]: accept(map[string]any{"answer": "Bob"})}}))
	done := pollTask(t, ctx, a, id2, func(res json.RawMessage) bool { return terminal(t, res) })
	if field(t, done, "status") != "completed" || !strings.Contains(string(done), "Bob") {
		t.Fatalf("task 2 through A: %s; want completed with the answer", done)
	}
	if got := field(t, pollTask(t, ctx, b, id2, func(res json.RawMessage) bool { return terminal(t, res) }), "status"); got != "completed" {
		t.Fatalf("task 2 through B: %s", got)
	}

	if got := tally.initializes.Load(); got != 1 {
		t.Errorf("the upstream saw %d initialize requests; want 1 for the one principal", got)
	}
	if got := tally.answers.Load(); got != 2 {
		t.Errorf("the upstream received %d answers; want 2 (each input answered exactly once)", got)
	}
	if got := tally.taskCalls.Load(); got != 2 {
		t.Errorf("the upstream got %d task-augmented tools/call; want 2", got)
	}
}

func terminal(t *testing.T, res json.RawMessage) bool {
	return statusOf(t, "completed", "failed", "cancelled")(res)
}

// A legacy task created asking (its CreateTaskResult already says
// input_required, the question comes inside the task) is the client's task
// (M-55): created through A, its question is seen and answered through B
// (tasks/get, tasks/update), and that same task completes with the answer.
func TestModernClientsTaskFirstAnsweredOnAnotherReplica(t *testing.T) {
	fx, a, b := twoReplicas(t, legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond, TaskFirstCompose: true})
	ctx := ctxT(t)
	created := mustOK(t, "tools/call through A", a.call(ctx, "tools/call", map[string]any{"name": "test_tool_with_task"}))
	id := field(t, created, "taskId")
	if field(t, created, "resultType") != "task" || id == "" {
		t.Fatalf("tools/call through A: %s; want the CreateTaskResult", created)
	}
	asking := pollTask(t, ctx, b, id, func(res json.RawMessage) bool { return len(inputKeys(t, res)) == 1 })
	keys := inputKeys(t, asking)
	mustOK(t, "tasks/update through B", b.call(ctx, "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{keys[0]: accept(map[string]any{"name": "Alice"})}}))
	done := pollTask(t, ctx, a, id, statusOf(t, "completed", "failed", "cancelled"))
	if !strings.Contains(string(done), "Hello, Alice!") {
		t.Fatalf("task through A: %s; want completed with Hello, Alice!", done)
	}
	st := fx.Stats()
	if st.TasksCreated != 1 || st.Responses != 1 || st.Initializes != 1 {
		t.Fatalf("upstream saw %d tasks, %d answers, %d initializes; want 1 each", st.TasksCreated, st.Responses, st.Initializes)
	}
}

// The upstream restarts and forgets its sessions (HTTP 404): a task created
// on the lost session is reported failed, saying why, through either replica
// (never a hang); the principal's next request through the replica that had
// not noticed yet goes to the session the other replica opened and recorded
// — one new initialize in all.
func TestModernClientsUpstreamLostTheSharedSession(t *testing.T) {
	fx, a, b := twoReplicas(t, legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	ctx := ctxT(t)
	created := mustOK(t, "tools/call through A", a.call(ctx, "tools/call", map[string]any{
		"name": "slow_task", "arguments": map[string]any{"ms": 600000, "text": "never"}}))
	id := field(t, created, "taskId")
	pollTask(t, ctx, b, id, statusOf(t, "working")) // A does not poll it: A never notices the loss itself
	fx.DropSessions()

	lost := pollTask(t, ctx, b, id, statusOf(t, "completed", "failed", "cancelled"))
	if field(t, lost, "status") != "failed" || !strings.Contains(field(t, lost, "error.message"), "404") ||
		!strings.Contains(field(t, lost, "error.message"), "can no longer be reached") {
		t.Fatalf("task of the lost session through B: %s; want failed, saying the upstream lost its session", lost)
	}
	// A has not noticed; its next request must not fail for it.
	again := mustOK(t, "tools/call through A after the loss", a.call(ctx, "tools/call", map[string]any{
		"name": "slow_task", "arguments": map[string]any{"ms": 5, "text": "again"}}))
	done := pollTask(t, ctx, b, field(t, again, "taskId"), statusOf(t, "completed", "failed", "cancelled"))
	if field(t, done, "status") != "completed" {
		t.Fatalf("new task through B: %s; want completed", done)
	}
	if got := field(t, pollTask(t, ctx, a, id, statusOf(t, "completed", "failed", "cancelled")), "status"); got != "failed" {
		t.Fatalf("task of the lost session through A: %s; want failed", got)
	}
	if got := fx.Stats().Initializes; got != 2 {
		t.Fatalf("the upstream saw %d initialize requests; want 2 (one before, one after it lost the session)", got)
	}
}
