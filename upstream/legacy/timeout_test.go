package legacyup_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/rpc"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// timedPools are the fixture behind a pool with Config.Timeout, over HTTP
// and over a multiplexed (stdio-like) connection.
func timedPools(t *testing.T, timeout time.Duration, fo legacyfixture.Options) map[string]*legacyup.Pool {
	t.Helper()
	out := map[string]*legacyup.Pool{}
	quiet := slog.New(slog.DiscardHandler)
	fx := legacyfixture.New(fo)
	url, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if out["http"], err = legacyup.NewPool(legacyup.Config{Endpoint: url, Timeout: timeout, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	if out["multiplexed"], err = legacyup.NewPool(legacyup.Config{Target: "in-memory fixture", Timeout: timeout, Logger: quiet, NewTransport: func() mcp.Transport {
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
// long as the task, here several times the bound; FetchTaskResult, the same
// request as an ordinary one, is cut.
func TestTimeoutCutsSilentCallsNotWaits(t *testing.T) {
	ended := make(chan struct{}, 4)
	pools := timedPools(t, 100*time.Millisecond, legacyfixture.Options{TimeScale: 1, PollInterval: 20 * time.Millisecond,
		OnStallEnd: func() { ended <- struct{}{} }})
	for name, p := range pools {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			s, err := p.Session(ctx, "", "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Call(ctx, "tools/call", json.RawMessage(`{"name":"stall"}`), legacyup.CallOptions{})
			if !legacyup.Timeout(err) || !legacyup.Retryable(err) {
				t.Fatalf("stalled tools/call: %v, want the retryable timeout error", err)
			}
			e := rpc.As(err)
			var data legacyup.TimeoutData
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
			// The same request as an ordinary fetch (a task expected to be
			// terminal, or past its ttl) is bounded.
			long := createTask(t, ctx, s, "slow_task", map[string]any{"ms": 60000})
			if _, err := s.FetchTaskResult(ctx, long.TaskID, nil); !legacyup.Timeout(err) {
				t.Fatalf("FetchTaskResult on a running task: %v, want the timeout error", err)
			}
		})
	}
}

// An upstream that does not take the bridge's answer to its own request
// (the POST of a JSON-RPC response hangs) holds the answering goroutine no
// longer than Config.Timeout.
func TestTimeoutBoundsAnswersTheUpstreamDoesNotTake(t *testing.T) {
	ctx := ctxT(t)
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	inner := fx.Handler()
	quit := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"result"`)) && !bytes.Contains(body, []byte(`"method"`)) {
			select { // never takes an answer
			case <-r.Context().Done():
			case <-quit:
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(quit) }) // before hs.Close: a hung handler ends
	p, err := legacyup.NewPool(legacyup.Config{Endpoint: hs.URL, Timeout: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	s, err := p.Session(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- s.Respond(context.Background(), json.RawMessage(`"side-1"`), json.RawMessage(`{}`), nil)
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("an answer the upstream never took was reported delivered")
		}
	case <-ctx.Done():
		t.Fatal("answering an upstream that does not take the answer hung")
	}
}
