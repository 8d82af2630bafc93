package legacyup_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/rpc"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// httpPool starts the fixture on loopback and a pool in front of it.
func httpPool(t *testing.T) (*legacyfixture.Server, *legacyup.Pool) {
	t.Helper()
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	url, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	p, err := legacyup.NewPool(legacyup.Config{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return fx, p
}

// memPool connects a pool to the fixture over in-memory transports (the
// multiplexed, stdio-like path). kill breaks the current connection, as when
// the upstream process dies.
func memPool(t *testing.T) (*legacyfixture.Server, *legacyup.Pool, func()) {
	t.Helper()
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	var mu sync.Mutex
	var conns []*killable
	var cancels []context.CancelFunc
	var wg sync.WaitGroup
	p, err := legacyup.NewPool(legacyup.Config{Target: "in-memory fixture", NewTransport: func() mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		k := &killable{inner: st}
		ctx, cancel := context.WithCancel(context.Background())
		mu.Lock()
		conns = append(conns, k)
		cancels = append(cancels, cancel)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = fx.Run(ctx, k)
		}()
		return ct
	}})
	if err != nil {
		t.Fatal(err)
	}
	kill := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range conns {
			k.kill()
		}
		fx.DropSessions() // blocked handlers end, so the server side can exit
		for _, c := range cancels {
			c()
		}
		conns, cancels = nil, nil
	}
	t.Cleanup(func() {
		_ = p.Close()
		kill()
		wg.Wait()
	})
	return fx, p, kill
}

// killable is a server transport whose connection can be cut.
type killable struct {
	inner mcp.Transport
	mu    sync.Mutex
	conn  mcp.Connection
}

func (k *killable) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := k.inner.Connect(ctx)
	k.mu.Lock()
	k.conn = c
	k.mu.Unlock()
	return c, err
}

func (k *killable) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.conn != nil {
		_ = k.conn.Close()
	}
}

func taskCall(name string, args map[string]any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"name": name, "arguments": args, "task": map[string]any{"ttl": 60000}})
	return b
}

func createTask(t *testing.T, ctx context.Context, s *legacyup.Session, name string, args map[string]any) legacy.Task {
	t.Helper()
	res, err := s.Call(ctx, "tools/call", taskCall(name, args), legacyup.CallOptions{})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	v := schemacheck.Load(t)
	v.Check(t, schemacheck.Legacy, "CreateTaskResult", res)
	ct, err := legacy.DecodeCreateTaskResult(res)
	if err != nil {
		t.Fatalf("decode CreateTaskResult %s: %v", res, err)
	}
	return ct.Task
}

func TestPoolOpensOneSessionPerKeyWithLegacyTasksCapability(t *testing.T) {
	_, p := httpPool(t)
	ctx := ctxT(t)
	a, err := p.Session(ctx, "principal-a", "")
	if err != nil {
		t.Fatal(err)
	}
	if a.ID() == "" {
		t.Fatal("HTTP session has no Mcp-Session-Id")
	}
	tc := a.TasksCapability()
	if tc == nil || !tc.ToolsCall || !tc.Cancel || !tc.List {
		t.Fatalf("tasks capability = %+v from %s", tc, a.InitializeResult())
	}
	again, err := p.Session(ctx, "principal-a", "")
	if err != nil || again != a {
		t.Fatalf("second Session for the same key = %p, %v; want the pooled %p", again, err, a)
	}
	b, err := p.Session(ctx, "principal-b", "")
	if err != nil {
		t.Fatal(err)
	}
	if b.ID() == a.ID() {
		t.Fatalf("two principals share upstream session %s", a.ID())
	}
	if p.Lookup(a.ID()) != a {
		t.Fatal("Lookup does not find the session by id")
	}
}

func TestTaskLifecycleOverHTTP(t *testing.T) {
	fx, p := httpPool(t)
	ctx := ctxT(t)
	s, err := p.Session(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	task := createTask(t, ctx, s, "slow_task", map[string]any{"ms": 200, "text": "hi"})
	if task.Status != legacy.StatusWorking {
		t.Fatalf("new task status %s, want working (L-17)", task.Status)
	}
	got, err := s.GetTask(ctx, task.TaskID)
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	if g, err := legacy.DecodeGetTaskResult(got); err != nil || g.Task.TaskID != task.TaskID {
		t.Fatalf("tasks/get = %s, %v", got, err)
	}
	resp, err := s.TaskResult(ctx, task.TaskID, nil)
	if err != nil {
		t.Fatalf("tasks/result: %v", err)
	}
	r, err := legacy.DecodeResponse(resp)
	if err != nil || r.Error != nil {
		t.Fatalf("tasks/result response %s: %v", resp, err)
	}
	if !strings.Contains(string(r.Result), "done after") {
		t.Fatalf("tasks/result result %s lacks the tool's text", r.Result)
	}
	if id, ok, _ := legacy.RelatedTaskOf(r.Result); !ok || id != task.TaskID {
		t.Fatalf("tasks/result result %s lacks related-task %s (L-34)", r.Result, task.TaskID)
	}
	list, err := s.ListTasks(ctx, "")
	if err != nil || !strings.Contains(string(list), task.TaskID) {
		t.Fatalf("tasks/list = %s, %v; want the task", list, err)
	}
	if fx.TaskStatus(task.TaskID) != legacy.StatusCompleted {
		t.Fatalf("fixture status %s", fx.TaskStatus(task.TaskID))
	}
}

func TestUpstreamErrorsComeBackAsRPCErrors(t *testing.T) {
	_, p := httpPool(t)
	ctx := ctxT(t)
	s, err := p.Session(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.GetTask(ctx, "no-such-task")
	var re *rpc.Error
	if !errors.As(err, &re) || re.Code != rpc.CodeInvalidParams {
		t.Fatalf("tasks/get unknown = %v, want the upstream's -32602 (L-38)", err)
	}
	var te *legacyup.Error
	if errors.As(err, &te) {
		t.Fatalf("an upstream JSON-RPC error must not be a transport *Error: %v", err)
	}
	// A protocol-error task: tasks/result carries the JSON-RPC error as the
	// response, not as a Go error (L-43).
	task := createTask(t, ctx, s, "protocol_error_job", nil)
	resp, err := s.TaskResult(ctx, task.TaskID, nil)
	if err != nil {
		t.Fatalf("tasks/result: %v", err)
	}
	r, err := legacy.DecodeResponse(resp)
	if err != nil || r.Error == nil || r.Error.Code != rpc.CodeInternalError {
		t.Fatalf("tasks/result of protocol_error_job = %s (%v), want error -32603", resp, err)
	}
}

func TestSideRequestOnTasksResultStreamIsRelayedByID(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) (*legacyfixture.Server, *legacyup.Pool)
	}{
		{"http", httpPool},
		{"multiplexed", func(t *testing.T) (*legacyfixture.Server, *legacyup.Pool) { fx, p, _ := memPool(t); return fx, p }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx, p := tc.open(t)
			ctx := ctxT(t)
			s, err := p.Session(ctx, "", "")
			if err != nil {
				t.Fatal(err)
			}
			task := createTask(t, ctx, s, "elicit_task", map[string]any{"question": "Your name?"})
			got := make(chan *legacyup.SideRequest, 1)
			type out struct {
				resp json.RawMessage
				err  error
			}
			done := make(chan out, 1)
			go func() {
				resp, err := s.TaskResult(ctx, task.TaskID, func(r *legacyup.SideRequest) { got <- r })
				done <- out{resp, err}
			}()
			var sr *legacyup.SideRequest
			select {
			case sr = <-got:
			case o := <-done:
				t.Fatalf("tasks/result ended before the side request: %s %v", o.resp, o.err)
			case <-ctx.Done():
				t.Fatal("no side request on the tasks/result stream")
			}
			if sr.Method != legacy.MethodElicitationCreate || sr.RelatedTask != task.TaskID {
				t.Fatalf("side request %s related-task %q; want elicitation/create for %s (L-33)", sr.Method, sr.RelatedTask, task.TaskID)
			}
			if !strings.Contains(string(sr.Params), "Your name?") {
				t.Fatalf("side request params %s", sr.Params)
			}
			if err := s.Respond(ctx, sr.ID, json.RawMessage(`{"action":"accept","content":{"answer":"Luca"}}`), nil); err != nil {
				t.Fatalf("respond: %v", err)
			}
			o := <-done
			if o.err != nil {
				t.Fatal(o.err)
			}
			if !strings.Contains(string(o.resp), `Luca`) {
				t.Fatalf("tasks/result %s does not carry the answer", o.resp)
			}
			if st := fx.Stats(); st.Answers != 1 {
				t.Fatalf("fixture saw %d answers, want 1", st.Answers)
			}
		})
	}
}

func TestUntaggedSideRequestGoesToTheCallInFlight(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) (*legacyfixture.Server, *legacyup.Pool)
	}{
		{"http", httpPool},
		{"multiplexed", func(t *testing.T) (*legacyfixture.Server, *legacyup.Pool) { fx, p, _ := memPool(t); return fx, p }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, p := tc.open(t)
			ctx := ctxT(t)
			s, err := p.Session(ctx, "", "")
			if err != nil {
				t.Fatal(err)
			}
			var answered int
			res, err := s.Call(ctx, "tools/call", taskCall("test_tool_with_task", nil), legacyup.CallOptions{
				OnRequest: func(r *legacyup.SideRequest) {
					answered++
					if r.RelatedTask != "" {
						t.Errorf("request before the task exists carries related-task %q", r.RelatedTask)
					}
					_ = s.Respond(ctx, r.ID, json.RawMessage(`{"action":"accept","content":{"name":"Alice"}}`), nil)
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if answered != 1 || !legacy.IsCreateTaskResult(res) {
				t.Fatalf("answered %d requests; result %s", answered, res)
			}
		})
	}
}

func TestDeadSessionFailsFastAndIsReplaced(t *testing.T) {
	fx, p := httpPool(t)
	ctx := ctxT(t)
	s, err := p.Session(ctx, "k", "")
	if err != nil {
		t.Fatal(err)
	}
	task := createTask(t, ctx, s, "slow_task", map[string]any{"ms": 60000})
	fx.DropSessions()
	_, err = s.GetTask(ctx, task.TaskID)
	if !errors.Is(err, legacyup.ErrSessionGone) {
		t.Fatalf("tasks/get on a dropped session = %v, want ErrSessionGone", err)
	}
	if !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), s.ID()) {
		t.Fatalf("error %q does not say why (HTTP 404, session id)", err)
	}
	if rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Fatalf("code %d, want -32603", rpc.CodeOf(err))
	}
	if s.Alive() || s.Err() == nil {
		t.Fatal("session still alive after 404")
	}
	if _, err := s.Call(ctx, "tools/list", nil, legacyup.CallOptions{}); !errors.Is(err, legacyup.ErrSessionGone) {
		t.Fatalf("later call = %v, want ErrSessionGone without a request", err)
	}
	s2, err := p.Session(ctx, "k", "")
	if err != nil {
		t.Fatal(err)
	}
	if s2 == s || s2.ID() == s.ID() || !s2.Alive() {
		t.Fatalf("pool did not re-initialize: %s vs %s", s2.ID(), s.ID())
	}
	if p.Lookup(s.ID()) != s {
		t.Fatal("the dead session is no longer findable by id")
	}
}

func TestBlockingCallEndsWhenUpstreamGoesAway(t *testing.T) {
	waiting := make(chan string, 1)
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 1, PollInterval: 20 * time.Millisecond,
		OnTasksResult: func(id string) { waiting <- id }})
	url, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	p, err := legacyup.NewPool(legacyup.Config{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := ctxT(t)
	s, err := p.Session(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	task := createTask(t, ctx, s, "slow_task", map[string]any{"ms": 600000})
	done := make(chan error, 1)
	go func() {
		_, err := s.TaskResult(ctx, task.TaskID, nil)
		done <- err
	}()
	select { // the fixture has the blocking tasks/result in hand
	case <-waiting:
	case <-ctx.Done():
		t.Fatal("tasks/result never reached the fixture")
	}
	stop()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("tasks/result succeeded on a stopped upstream")
		}
		if rpc.CodeOf(err) != rpc.CodeInternalError {
			t.Fatalf("error %v has code %d", err, rpc.CodeOf(err))
		}
	case <-ctx.Done():
		t.Fatal("tasks/result hung after the upstream went away")
	}
}

func TestMultiplexedSessionEndsWithTheProcess(t *testing.T) {
	_, p, kill := memPool(t)
	ctx := ctxT(t)
	s, err := p.Session(ctx, "any", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.ID(), "stdio-") || s.TasksCapability() == nil {
		t.Fatalf("stdio session id %q, tasks %v", s.ID(), s.TasksCapability())
	}
	other, err := p.Session(ctx, "another-principal", "")
	if err != nil || other != s {
		t.Fatalf("a stdio upstream is one shared session: %p vs %p (%v)", other, s, err)
	}
	task := createTask(t, ctx, s, "slow_task", map[string]any{"ms": 600000})
	done := make(chan error, 1)
	go func() {
		_, err := s.TaskResult(ctx, task.TaskID, nil)
		done <- err
	}()
	kill()
	select {
	case err := <-done:
		if !errors.Is(err, legacyup.ErrSessionGone) {
			t.Fatalf("tasks/result after the process ended = %v, want ErrSessionGone", err)
		}
	case <-ctx.Done():
		t.Fatal("tasks/result hung after the upstream process ended")
	}
	<-s.Done()
	s2, err := p.Session(ctx, "any", "")
	if err != nil || s2 == s {
		t.Fatalf("no new session after the process ended: %v", err)
	}
}

func TestNewPoolNeedsExactlyOneUpstream(t *testing.T) {
	if _, err := legacyup.NewPool(legacyup.Config{}); err == nil {
		t.Fatal("NewPool without an upstream succeeded")
	}
	if _, err := legacyup.NewPool(legacyup.Config{Endpoint: "http://127.0.0.1:1/mcp", NewTransport: func() mcp.Transport { return nil }}); err == nil {
		t.Fatal("NewPool with two upstreams succeeded")
	}
}

func TestUnreachableUpstreamIsRetryable(t *testing.T) {
	p, err := legacyup.NewPool(legacyup.Config{Endpoint: "http://127.0.0.1:1/mcp", InitTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Session(ctxT(t), "", "")
	if err == nil || !legacyup.Retryable(err) {
		t.Fatalf("Session on a closed port = %v, want a retryable error", err)
	}
}

// The fixture creates a tool's task working when the task asks for input as
// soon as it runs (elicit_task, sample_task, multi_input): its
// CreateTaskResult is the state at creation, and the request follows on the
// tasks/result side channel (L-46). Only test_tool_with_task under
// TaskFirstCompose is created input_required. The modern face answers a task
// created input_required with an MRTR round instead of the task, so a
// CreateTaskResult that raced the task's first ask made the bridge's interop
// tests flaky. The race needs the task's goroutine to run before the answer
// is built, so the test creates many tasks; before the fix a few percent of
// them said input_required.
func TestFixtureAskingTaskIsCreatedWorking(t *testing.T) {
	_, p := httpPool(t)
	ctx := ctxT(t)
	s, err := p.Session(ctx, "tester", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		for _, tool := range []string{"elicit_task", "sample_task", "multi_input"} {
			task := createTask(t, ctx, s, tool, map[string]any{})
			if task.Status != legacy.StatusWorking {
				t.Fatalf("call %d: %s was created %s, want working (its input request belongs on tasks/result)", i, tool, task.Status)
			}
			if _, err := s.CancelTask(ctx, task.TaskID); err != nil {
				t.Fatalf("tasks/cancel: %v", err)
			}
		}
	}
}
