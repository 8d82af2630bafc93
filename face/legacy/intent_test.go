package legacyface_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// resettingUpstream is the demo upstream whose tools/call runs (the task
// is created upstream) and whose answer is then lost: the connection is
// cut before a byte of the response is written.
func resettingUpstream(t *testing.T) *upEnv {
	t.Helper()
	clk := demo.NewFakeClock(t0)
	s := demo.New(demo.Options{Clock: clk, PollInterval: 20 * time.Millisecond})
	inner := s.Handler()
	cut := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") != "tools/call" {
			inner.ServeHTTP(w, r)
			return
		}
		inner.ServeHTTP(httptest.NewRecorder(), r) // the upstream creates the task
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
	})
	rec := &recorder{next: cut, hits: make(chan string, 256), served: make(chan string, 256)}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rec)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		s.Close()
		hs.Close()
	})
	return &upEnv{srv: s, clock: clk, url: hs.URL + "/mcp", rec: rec, hs: hs}
}

func intentsOf(t *testing.T, st sessionmap.IntentStore) []sessionmap.Intent {
	t.Helper()
	all, err := st.AllIntents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// An upstream that creates the task and then loses its answer (the
// connection reset) leaves the create intent in the store: tool, scope,
// time, no upstream id (none arrived), so `bridge tasks orphans` reports
// it. Before, nothing of the call was recorded.
func TestIntentStaysWhenUpstreamAnswerIsLost(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := resettingUpstream(t)
	st := sessionmap.NewMemory()
	br := startBridge(t, up, legacyface.Config{Store: st})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	r, err := c.try(ctx, "tools/call", map[string]any{"name": "slow_task",
		"arguments": map[string]any{"ms": 3600000, "text": "lost"}, "task": map[string]any{}})
	if err == nil && r.Err == nil {
		t.Fatalf("the call succeeded through a cut connection: %s", r.Envelope)
	}
	if n := len(up.srv.TaskIDs()); n != 1 {
		t.Fatalf("the upstream holds %d tasks, want the 1 it created", n)
	}
	all := intentsOf(t, st)
	if len(all) != 1 {
		t.Fatalf("intents = %+v, want the 1 of the lost create (answer %v %s)", all, err, r.Envelope)
	}
	in := all[0]
	if in.ToolName != "slow_task" || in.Scope.Session != c.sessionID() || in.CreatedAt.IsZero() || in.UpstreamTaskID != "" || in.Outcome != "" {
		t.Fatalf("intent = %+v", in)
	}
	if _, err := st.LookupTask(ctx, in.ID); err == nil {
		t.Fatal("a task record exists for the lost create")
	}
}

// failingCreates is a Memory store whose CreateTask fails (the store broke
// between the intent and the task record) or blocks until its context
// ends (the client goes away while the record is written).
type failingCreates struct {
	*sessionmap.Memory
	mode    atomic.Int32 // 0 fail, 1 block
	entered chan struct{}
}

func (f *failingCreates) CreateTask(ctx context.Context, rec sessionmap.Task) error {
	select {
	case f.entered <- struct{}{}:
	default:
	}
	if f.mode.Load() == 1 {
		<-ctx.Done()
		return ctx.Err()
	}
	return context.DeadlineExceeded
}

// When the upstream's task id arrived but the task cannot reach the client
// (its record cannot be written, or the client is gone while it is), the
// bridge cancels the upstream task (the upstream sees tasks/cancel, the
// task is cancelled there) and records the outcome with the upstream id on
// the intent. Before, the upstream task ran on for nobody.
func TestUndeliveredTaskIsCancelledUpstream(t *testing.T) {
	for _, mode := range []string{"store-fails", "client-gone"} {
		t.Run(mode, func(t *testing.T) {
			ctx := ctxT(t, 30*time.Second)
			up := startUpstream(t, demo.Options{})
			st := &failingCreates{Memory: sessionmap.NewMemory(), entered: make(chan struct{}, 1)}
			if mode == "client-gone" {
				st.mode.Store(1)
			}
			br := startBridge(t, up, legacyface.Config{Store: st})
			c := newRawClient(t, br.url)
			c.initialize(ctx, nil)
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				r, err := c.try(cctx, "tools/call", map[string]any{"name": "slow_task",
					"arguments": map[string]any{"ms": 3600000, "text": "undelivered"}, "task": map[string]any{}})
				if err == nil && r.Err == nil {
					t.Errorf("the call answered a task whose record was never written: %s", r.Envelope)
				}
			}()
			select {
			case <-st.entered:
			case <-ctx.Done():
				t.Fatal("the task record was never written")
			}
			if mode == "client-gone" {
				cancel()
			}
			<-done
			cancel()
			up.rec.awaitHit(t, ctx, "tasks/cancel")
			ids := up.srv.TaskIDs()
			if len(ids) != 1 {
				t.Fatalf("upstream tasks: %v", ids)
			}
			eventually(t, ctx, "the upstream task cancelled", func() bool {
				return up.srv.Status(ids[0]) == modern.TaskStatus("cancelled")
			})
			eventually(t, ctx, "the intent recording the cancel", func() bool {
				all := intentsOf(t, st.Memory)
				return len(all) == 1 && all[0].Outcome == sessionmap.IntentCancelled &&
					all[0].UpstreamTaskID == ids[0] && all[0].ToolName == "slow_task"
			})
		})
	}
}

// A normal create leaves no intent behind (its record carries the intent's
// id, and the intent is deleted with the next intent write or at Close),
// and a call the upstream refused leaves none either.
func TestNormalCreateLeavesNoIntent(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	st := sessionmap.NewMemory()
	br := startBridge(t, up, legacyface.Config{Store: st})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task",
		"arguments": map[string]any{"ms": 3600000, "text": "fine"}, "task": map[string]any{}}))
	if r := c.call(ctx, "tools/call", map[string]any{"name": "no_such_tool", "arguments": map[string]any{}, "task": map[string]any{}}); r.Err == nil {
		t.Fatalf("an unknown tool: %s", r.Envelope)
	}
	if _, err := lookupTask(br, id); err != nil {
		t.Fatal(err)
	}
	// The second call's intent write deleted the first's (settled) intent
	// in the same store write; the bridge's Close deletes the last.
	if all := intentsOf(t, st); len(all) != 1 || all[0].ID == id {
		t.Fatalf("intents before Close = %+v, want only the refused call's", all)
	}
	if err := br.b.Close(); err != nil {
		t.Fatal(err)
	}
	if all := intentsOf(t, st); len(all) != 0 {
		t.Fatalf("intents left after Close: %+v", all)
	}
}

// eventually polls external state until cond holds or ctx ends.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("never: %s", what)
		}
	}
}
