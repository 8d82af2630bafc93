package modernface_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// lockedBuffer is a log sink tests read while the face writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A legacy upstream that never answers a tools/call is bounded by the
// bridge's --upstream-timeout (upstream/legacy.Config.Timeout): the modern
// client gets a retryable -32603 naming the upstream and the setting (with
// the bound in data), the call is cancelled upstream (notifications/cancelled
// on the legacy session: the fixture's handler ends), and a WARN says so in
// plain words. Before, the client waited as long as it was willing to.
func TestStalledLegacyUpstreamIsBounded(t *testing.T) {
	ctx := ctxT(t)
	ended := make(chan struct{}, 4)
	var logs lockedBuffer
	e := newEnv(t, envOpts{
		fixture: func(o *legacyfixture.Options) { o.OnStallEnd = func() { ended <- struct{}{} } },
		upOpts: func(c *legacyup.Config) {
			c.Timeout = 300 * time.Millisecond
			c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		},
	})
	for i, caps := range []clientCaps{withTasks, withoutTasks} {
		r := e.rpc(ctx, "tools/call", map[string]any{"name": "stall"}, caps)
		if r.result != nil || r.errCode != rpc.CodeInternalError || r.status != http.StatusOK {
			t.Fatalf("tools/call stall (caps %+v): HTTP %d %s, want -32603", caps, r.status, r.body)
		}
		for _, want := range []string{"did not answer tools/call within 300ms", "--upstream-timeout", "try again later", e.pool.Target()} {
			if !strings.Contains(r.errMsg, want) {
				t.Errorf("tools/call stall: message %q lacks %q", r.errMsg, want)
			}
		}
		var data legacyup.TimeoutData
		if err := json.Unmarshal(r.errData, &data); err != nil || data.Method != "tools/call" || data.TimeoutMs != 300 ||
			data.Setting != "--upstream-timeout" || data.Upstream != e.pool.Target() {
			t.Errorf("tools/call stall: data %s, want the upstream, the method, the bound and the setting", r.errData)
		}
		select {
		case <-ended: // the upstream was told: its handler was cancelled
		case <-ctx.Done():
			t.Fatalf("call %d: the stalled tools/call was never cancelled upstream", i)
		}
	}
	if st := e.fx.Stats(); st.Stalls != 2 || st.StallsCancelled != 2 {
		t.Errorf("fixture stats %+v: want 2 stalled calls, both cancelled", st)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "did not answer a request in time") ||
		!strings.Contains(l, "--upstream-timeout") || !strings.Contains(l, "method=tools/call") {
		t.Errorf("log: %q, want a WARN naming the method and --upstream-timeout", l)
	}
}

// The blocking tasks/result the bridge holds upstream for a task (to receive
// its input requests and its result) is a wait on the task's behalf: the
// upstream timeout does not cut it, the task's life does. Once the task's
// ttl has run out (here while it waits for an answer nobody gives) the wait
// ends upstream — cancelled, the task itself untouched (L-86) — instead of
// holding a goroutine and an upstream stream until the bridge stops.
func TestTaskWaitEndsWithTheTask(t *testing.T) {
	ctx := ctxT(t)
	started, ended := make(chan string, 4), make(chan string, 4)
	e := newEnv(t, envOpts{
		face: func(o *modernface.Options) { o.TaskTTL = 400 * time.Millisecond },
		fixture: func(o *legacyfixture.Options) {
			o.OnTasksResult = func(id string) { started <- id }
			o.OnTasksResultEnd = func(id string) { ended <- id }
		},
		upOpts: func(c *legacyup.Config) { c.Timeout = 100 * time.Millisecond },
	})
	id := createTask(t, e, ctx, "elicit_task", map[string]any{"question": "Never answered?"})
	e.pollUntil(ctx, id, withTasks, statusIs("input_required"))
	var upID string
	select {
	case upID = <-started:
	case <-ctx.Done():
		t.Fatal("the bridge never waited on the task upstream")
	}
	select {
	case got := <-ended:
		if got != upID {
			t.Fatalf("a wait on %s ended, want %s", got, upID)
		}
	case <-ctx.Done():
		t.Fatal("the bridge's wait on the task outlived the task's ttl")
	}
	if st := e.fx.Stats(); st.TasksCancel != 0 {
		t.Errorf("fixture stats %+v: ending the wait must leave the task alone (L-86)", st)
	}
}

// While a call waits for the client's input (an MRTR round: the upstream
// asked, the bridge has not answered yet) the upstream's silence is not
// slowness: the upstream timeout is held until the bridge answers, and the
// round's own bound (MRTRTimeout) applies instead. A retry that comes after
// several times the upstream timeout still completes the call.
func TestInputWaitIsNotUpstreamSilence(t *testing.T) {
	ctx := ctxT(t)
	const bound = 100 * time.Millisecond
	e := newEnv(t, envOpts{upOpts: func(c *legacyup.Config) { c.Timeout = bound }})
	args := map[string]any{"name": "ask_sync", "arguments": map[string]any{"question": "Your name?"}}
	r := e.rpc(ctx, "tools/call", args, withTasks).ok(t)
	state, _ := r["requestState"].(string)
	reqs, _ := r["inputRequests"].(map[string]any)
	if r["resultType"] != "input_required" || state == "" || len(reqs) != 1 {
		t.Fatalf("round 1: %v, want one input request", r)
	}
	answers := map[string]any{}
	for k := range reqs {
		answers[k] = map[string]any{"action": "accept", "content": map[string]any{"answer": "Ada"}}
	}
	// The client takes its time: longer than the upstream timeout (the
	// point of the test is the time that passes, not an ordering).
	select {
	case <-time.After(4 * bound):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	retry := map[string]any{"name": "ask_sync", "arguments": map[string]any{"question": "Your name?"}, "requestState": state, "inputResponses": answers}
	res := e.rpc(ctx, "tools/call", retry, withTasks)
	if b, _ := json.Marshal(res.result); res.result == nil || !strings.Contains(string(b), "accept: Ada") {
		t.Fatalf("retry after %v: HTTP %d %s, want the tool's answer", 4*bound, res.status, res.body)
	}
}

// bridge serve's --upstream-timeout (server.Config.UpstreamTimeout) reaches
// the legacy upstream the modern face uses: through the whole composition a
// modern client's stalled tools/call is answered with the timeout's error.
// Before, the setting bounded only a modern upstream.
func TestUpstreamTimeoutSettingReachesTheModernFace(t *testing.T) {
	ctx := ctxT(t)
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	up, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	s, err := router.New(router.Config{Upstream: up, UpstreamEra: "legacy", UpstreamTimeout: 200 * time.Millisecond,
		Store: sessionmap.NewMemory(), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Mux(false))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		_ = s.Close()
	})
	e := &env{t: t, url: hs.URL + "/mcp"}
	r := e.rpc(ctx, "tools/call", map[string]any{"name": "stall"}, withTasks)
	if r.errCode != rpc.CodeInternalError || !strings.Contains(r.errMsg, "within 200ms (the bridge's --upstream-timeout)") {
		t.Fatalf("stalled tools/call through bridge serve's composition: HTTP %d %s", r.status, r.body)
	}
}
