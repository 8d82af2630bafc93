package legacyface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// docs/ARCHITECTURE.md, Each input key is asked once and answered once: two
// waiters of one session see one elicitation for a key.
func TestOneElicitationPerSession(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	c.setHandler(func(string, json.RawMessage) (any, *rpc.Error) {
		return map[string]any{"action": "accept", "content": map[string]any{"answer": "one"}}, nil
	})
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Q?"}, "task": map[string]any{}}))
	second := newRawClient(t, br.url)
	second.setSession(c.sessionID())
	second.next = 100
	second.setHandler(c.onRequest)
	var wg sync.WaitGroup
	for _, w := range []*rawClient{c, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := w.call(ctx, "tasks/result", map[string]any{"taskId": id}); r.Err != nil || !bytes.Contains(r.Result, []byte(`"one"`)) {
				t.Errorf("waiter: %s", r.Envelope)
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, w := range []*rawClient{c, second} {
		for _, m := range w.allReceived() {
			if bytes.Contains(m, []byte(`"elicitation/create"`)) {
				n++
			}
		}
	}
	if n != 1 {
		t.Errorf("%d elicitations in one session for one key, want 1", n)
	}
	if cn := up.srv.Counters(); cn.TasksUpdate != 1 {
		t.Errorf("tasks/update %d, want 1", cn.TasksUpdate)
	}
}

// --upstream-command: the same flows against a stdio modern upstream (one
// shared connection; push over the same pipe).
func TestStdioUpstreamCommand(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envChild, "upstream") // inherited by the upstream process only (TestMain has run)
	br := startBridge(t, nil, legacyface.Config{UpstreamCommand: "'" + exe + "' -test.run=^$"})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 30, "text": "over a pipe"}, "task": map[string]any{}}))
	if r := c.call(ctx, "tasks/result", map[string]any{"taskId": id}); r.Err != nil || !bytes.Contains(r.Result, []byte(`"over a pipe"`)) {
		t.Errorf("tasks/result: %s", r.Envelope)
	}
	c.setHandler(func(string, json.RawMessage) (any, *rpc.Error) {
		return map[string]any{"action": "accept", "content": map[string]any{"answer": "piped"}}, nil
	})
	ask := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Q?"}, "task": map[string]any{}}))
	if r := c.call(ctx, "tasks/result", map[string]any{"taskId": ask}); r.Err != nil || !bytes.Contains(r.Result, []byte(`"piped"`)) {
		t.Errorf("tasks/result with elicitation: %s", r.Envelope)
	}
	c.checkReceived(t)
}

// failingStore refuses task creation when armed.
type failingStore struct {
	*sessionmap.Memory
	mu   sync.Mutex
	fail bool
}

func (f *failingStore) CreateTask(ctx context.Context, tk sessionmap.Task) error {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return errors.New("disk full")
	}
	return f.Memory.CreateTask(ctx, tk)
}

// L-12, docs/ARCHITECTURE.md, No handle before it is durable: no task id
// reaches a client before it is
// durable; when the record cannot be written the client gets -32603 and no
// task.
func TestNoTaskIDBeforeDurable(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	st := &failingStore{Memory: sessionmap.NewMemory()}
	br := startBridge(t, up, legacyface.Config{Store: st})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	st.mu.Lock()
	st.fail = true
	st.mu.Unlock()
	for _, tool := range []string{"slow_task", "echo"} {
		args := map[string]any{"ms": 60000, "text": "x"}
		if tool == "echo" {
			args = map[string]any{"text": "x"}
		}
		r := c.call(ctx, "tools/call", map[string]any{"name": tool, "arguments": args, "task": map[string]any{}})
		if r.Err == nil || r.Err.Code != rpc.CodeInternalError || bytes.Contains(r.Envelope, []byte("taskId")) {
			t.Errorf("%s with a failing store: %s", tool, r.Envelope)
		}
	}
}

// Graceful stop of a single-process bridge (a data directory: its stream
// events die with the process): a blocked tasks/result is handed back with
// an error that says to call again; the task itself is untouched.
func TestShutdownHandsBackWaits(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{DataDir: t.TempDir(), KeepAlive: 5 * time.Millisecond})
	st := br.b.Store().(sessionmap.Admin)
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	c.drainEvents()
	done := make(chan *reply, 1)
	go func() {
		r, _ := c.try(ctx, "tasks/result", map[string]any{"taskId": id})
		done <- r
	}()
	c.awaitEvent(ctx, "comment")
	if err := br.b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r == nil || r.Err == nil || r.Err.Code != rpc.CodeInternalError || !strings.Contains(r.Err.Message, "call again") {
		t.Errorf("handed-back wait: %+v", r)
	}
	if rec, err := st.LookupTask(ctx, id); err != nil || rec.Status != sessionmap.StatusWorking {
		t.Errorf("task after shutdown: %+v %v", rec, err)
	}
	if p := c.call(ctx, "ping", nil); p.Status != http.StatusServiceUnavailable {
		t.Errorf("request while shutting down: HTTP %d", p.Status)
	}
}

// A body that is not JSON is a JSON-RPC parse error (-32700), not a crash.
func TestParseError(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	r, err := c.post(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusBadRequest || r.Err == nil || r.Err.Code != rpc.CodeParseError {
		t.Errorf("malformed JSON: HTTP %d %s", r.Status, r.Body)
	}
}

// A face served on its own refuses a body nested deeper than 128 levels
// with -32600 naming the limit (never "not JSON", though encoding/json's
// own limit of 10,000 makes json.Valid refuse it), in linear work.
func TestTooDeepOnItsOwn(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	for _, depth := range []int{200, 20_000} {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":` +
			strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}}`)
		r, err := c.post(ctx, body, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != http.StatusBadRequest || r.Err == nil || r.Err.Code != rpc.CodeInvalidRequest ||
			!strings.Contains(r.Err.Message, "request nesting is deeper than 128 levels") {
			t.Errorf("depth %d: HTTP %d %s", depth, r.Status, r.Body)
		}
	}
}

// Hooks see every legacy request (method, outcome, code), every upstream
// request and the session lifecycle, without ids.
func TestHooks(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	var mu sync.Mutex
	var reqs []legacyface.RequestEvent
	var ups []legacyface.UpstreamEvent
	var sess []legacyface.SessionEvent
	br := startBridge(t, up, legacyface.Config{Hooks: legacyface.Hooks{
		Request:  func(e legacyface.RequestEvent) { mu.Lock(); reqs = append(reqs, e); mu.Unlock() },
		Upstream: func(e legacyface.UpstreamEvent) { mu.Lock(); ups = append(ups, e); mu.Unlock() },
		Session:  func(e legacyface.SessionEvent) { mu.Lock(); sess = append(sess, e); mu.Unlock() },
	}})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	c.call(ctx, "tasks/get", map[string]any{"taskId": "nope"})
	mu.Lock()
	defer mu.Unlock()
	var sawOK, sawErr bool
	for _, e := range reqs {
		if e.Era != "legacy" {
			t.Errorf("era %q", e.Era)
		}
		sawOK = sawOK || (e.Method == "tools/call" && e.Outcome == legacyface.OutcomeOK)
		sawErr = sawErr || (e.Method == "tasks/get" && e.Outcome == legacyface.OutcomeError && e.Code == rpc.CodeInvalidParams)
	}
	if !sawOK || !sawErr {
		t.Errorf("request events %+v", reqs)
	}
	var sawUp bool
	for _, e := range ups {
		sawUp = sawUp || (e.Method == "tools/call" && e.Outcome == legacyface.OutcomeOK)
	}
	if !sawUp {
		t.Errorf("upstream events %+v", ups)
	}
	if len(sess) == 0 || sess[0].Kind != "start" || sess[0].Transport != "http" {
		t.Errorf("session events %+v", sess)
	}
}
