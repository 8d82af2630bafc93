package upstream_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/legacy/upstream"
	"github.com/tasksbridge/tasksbridge/legacy/upstream/fixture"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// timedPools are the fixture behind a pool with Config.Timeout, over HTTP
// and over a multiplexed (stdio-like) connection.
func timedPools(t *testing.T, timeout time.Duration, fo fixture.Options) map[string]*upstream.Pool {
	t.Helper()
	out := map[string]*upstream.Pool{}
	quiet := slog.New(slog.DiscardHandler)
	fx := fixture.New(fo)
	url, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if out["http"], err = upstream.NewPool(upstream.Config{Endpoint: url, Timeout: timeout, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	if out["multiplexed"], err = upstream.NewPool(upstream.Config{Target: "in-memory fixture", Timeout: timeout, Logger: quiet, NewTransport: func() mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = fx.Run(ctx, st)
		}()
		return ct
	}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range out {
			_ = p.Close()
		}
		fx.DropSessions()
		cancel()
		wg.Wait()
	})
	return out
}

// Config.Timeout cuts a call the upstream never answers, on both wires:
// the call is cancelled upstream (the fixture's handler ends) and the error
// is retryable, says what happened in words and carries the bound. A wait
// held for a task (tasks/result, CallOptions.Wait) is not cut: it lasts as
// long as the task, here several times the bound.
func TestTimeoutCutsSilentCallsNotWaits(t *testing.T) {
	ended := make(chan struct{}, 4)
	pools := timedPools(t, 100*time.Millisecond, fixture.Options{TimeScale: 1, PollInterval: 20 * time.Millisecond,
		OnStallEnd: func() { ended <- struct{}{} }})
	for name, p := range pools {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			s, err := p.Session(ctx, "", "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Call(ctx, "tools/call", json.RawMessage(`{"name":"stall"}`), upstream.CallOptions{})
			if !upstream.Timeout(err) || !upstream.Retryable(err) {
				t.Fatalf("stalled tools/call: %v, want the retryable timeout error", err)
			}
			e := rpc.As(err)
			var data upstream.TimeoutData
			if e.Code != rpc.CodeInternalError || !strings.Contains(e.Message, "--upstream-timeout") || json.Unmarshal(e.Data, &data) != nil ||
				data.TimeoutMs != 100 || data.Method != "tools/call" {
				t.Fatalf("stalled tools/call: %d %q %s", e.Code, e.Message, e.Data)
			}
			select {
			case <-ended:
			case <-ctx.Done():
				t.Fatal("the stalled call was never cancelled upstream")
			}
			task := createTask(t, ctx, s, "slow_task", map[string]any{"ms": 500, "text": "waited"})
			resp, err := s.TaskResult(ctx, task.TaskID, nil)
			if err != nil || !strings.Contains(string(resp), "waited") {
				t.Fatalf("tasks/result on a task that outlasts the bound: %s, %v", resp, err)
			}
		})
	}
}
