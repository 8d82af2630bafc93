package legacyup_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// sharedPools starts the fixture and n pools (as n bridge processes) that
// share one store.
func sharedPools(t *testing.T, n int, fo ...legacyfixture.Options) (*legacyfixture.Server, []*legacyup.Pool, sessionmap.Store) {
	t.Helper()
	o := legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond}
	if len(fo) > 0 {
		o = fo[0]
	}
	fx := legacyfixture.New(o)
	url, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	st := sessionmap.NewMemory()
	t.Cleanup(func() { _ = st.Close() })
	var pools []*legacyup.Pool
	for range n {
		p, err := legacyup.NewPool(legacyup.Config{Endpoint: url, Store: st})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		pools = append(pools, p)
	}
	return fx, pools, st
}

// Two processes sharing a store use one upstream session per principal: the
// second reuses the first's by its Mcp-Session-Id (one initialize upstream),
// knows its InitializeResult, and reaches the tasks created through the first
// (the legacy server binds them to the session).
func TestSharedSessionIsReusedByAnotherProcess(t *testing.T) {
	fx, pools, _ := sharedPools(t, 2)
	ctx := ctxT(t)
	a, err := pools[0].Session(ctx, "principal-1", "")
	if err != nil {
		t.Fatal(err)
	}
	task := createTask(t, ctx, a, "slow_task", map[string]any{"ms": 60000})
	b, err := pools[1].Session(ctx, "principal-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if b.ID() != a.ID() {
		t.Fatalf("second process uses session %q, first %q; want the same", b.ID(), a.ID())
	}
	if got := fx.Stats().Initializes; got != 1 {
		t.Fatalf("upstream saw %d initialize requests; want 1", got)
	}
	if len(b.InitializeResult()) == 0 || b.TasksCapability() == nil || !b.TasksCapability().ToolsCall {
		t.Fatalf("reused session lacks the InitializeResult: %s, tasks %+v", b.InitializeResult(), b.TasksCapability())
	}
	if _, err := b.GetTask(ctx, task.TaskID); err != nil {
		t.Fatalf("tasks/get through the second process: %v", err)
	}
	// Another principal gets its own session.
	c, err := pools[1].Session(ctx, "principal-2", "")
	if err != nil || c.ID() == a.ID() {
		t.Fatalf("second principal: session %v, %v; want its own", c, err)
	}
	// A process that stops does not end the shared session upstream.
	if err := pools[0].Close(); err != nil {
		t.Fatal(err)
	}
	if got := fx.Stats().Deletes; got != 0 {
		t.Fatalf("closing one process sent %d DELETEs; the shared session must outlive it", got)
	}
	if _, err := b.GetTask(ctx, task.TaskID); err != nil {
		t.Fatalf("tasks/get after the other process stopped: %v", err)
	}
}

// A recorded session the upstream lost (HTTP 404) is replaced once: the
// process that finds it dead opens and records a new one, and the other
// process adopts that one instead of initializing again. Tasks of the old
// session fail clearly, never hang.
func TestSharedSessionReplacedAfterUpstreamLostIt(t *testing.T) {
	fx, pools, _ := sharedPools(t, 2)
	ctx := ctxT(t)
	a, err := pools[0].Session(ctx, "p", "")
	if err != nil {
		t.Fatal(err)
	}
	task := createTask(t, ctx, a, "slow_task", map[string]any{"ms": 60000})
	fx.DropSessions() // the upstream restarted
	b, err := pools[1].Session(ctx, "p", "")
	if err != nil {
		t.Fatal(err)
	}
	if b.ID() == a.ID() {
		t.Fatal("the second process adopted a session the upstream no longer knows")
	}
	if _, err := a.GetTask(ctx, task.TaskID); !errors.Is(err, legacyup.ErrSessionGone) {
		t.Fatalf("tasks/get on the lost session: %v; want ErrSessionGone", err)
	}
	a2, err := pools[0].Session(ctx, "p", "")
	if err != nil {
		t.Fatal(err)
	}
	if a2.ID() != b.ID() {
		t.Fatalf("first process uses %q after the loss, second %q; want the recorded one", a2.ID(), b.ID())
	}
	if got := fx.Stats().Initializes; got != 2 {
		t.Fatalf("upstream saw %d initialize requests; want 2 (the first, one after the loss)", got)
	}
}

// Concurrent first use by several processes leaves one session recorded and
// used by all; the losers end their own sessions upstream.
func TestSharedSessionConcurrentFirstUse(t *testing.T) {
	fx, pools, _ := sharedPools(t, 4)
	ctx := ctxT(t)
	ids := make([]string, len(pools))
	errs := make([]error, len(pools))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, err := p.Session(ctx, "p", "")
			if err == nil {
				ids[i] = s.ID()
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	for i := range pools {
		if errs[i] != nil {
			t.Fatalf("process %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("processes use sessions %v; want one", ids)
		}
	}
	st := fx.Stats()
	if st.Deletes != st.Initializes-1 {
		t.Fatalf("%d initializes, %d DELETEs; every session but the recorded one must be ended", st.Initializes, st.Deletes)
	}
}

// Two processes call on the same upstream session at once: their JSON-RPC
// ids must differ, or the server refuses the second as a duplicate in-flight
// request.
func TestSharedSessionCallsFromTwoProcessesAtOnce(t *testing.T) {
	started := make(chan string, 4)
	_, pools, _ := sharedPools(t, 2, legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond,
		OnTasksResult: func(id string) { started <- id }})
	ctx := ctxT(t)
	a, err := pools[0].Session(ctx, "p", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := pools[1].Session(ctx, "p", "")
	if err != nil {
		t.Fatal(err)
	}
	task := createTask(t, ctx, a, "slow_task", map[string]any{"ms": 20000, "text": "done"})
	errs := make(chan error, 2)
	for _, s := range []*legacyup.Session{a, b} {
		go func() {
			resp, err := s.TaskResult(ctx, task.TaskID, nil)
			var r struct {
				Error json.RawMessage `json:"error"`
			}
			if err == nil && json.Unmarshal(resp, &r) == nil && r.Error != nil {
				err = fmt.Errorf("the upstream answered %s", r.Error)
			}
			errs <- err
		}()
		select { // this process's tasks/result is in flight before the next one starts
		case <-started:
		case err := <-errs:
			t.Fatalf("tasks/result ended early: %v", err)
		case <-ctx.Done():
			t.Fatal("tasks/result never reached the upstream")
		}
	}
	// Both are in the upstream's hands: neither was refused. (They end when
	// the pools close.)
}
