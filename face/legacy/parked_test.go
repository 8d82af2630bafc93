package legacyface_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
)

// A blocked tasks/result over HTTP/1.1 parks (its connection taken over,
// no goroutine of its own) and still gets its answer, framed as the HTTP/1.1
// chunked event stream it began as, with event ids (resumable, L-63); with
// parking disabled, and over HTTP/2 (no takeover), the blocking wait answers
// the same.
func TestParkedResultAnswered(t *testing.T) {
	for _, mode := range []string{"parked", "blocking", "http2"} {
		t.Run(mode, func(t *testing.T) {
			ctx := ctxT(t, 20*time.Second)
			up := startUpstream(t, demo.Options{})
			cfg := legacyface.Config{DisableParkedWaits: mode == "blocking"}
			br := startBridge(t, up, cfg)
			c := newRawClient(t, br.url)
			if mode == "http2" {
				hs := httptest.NewUnstartedServer(br.b.Mux())
				hs.EnableHTTP2 = true
				hs.StartTLS()
				t.Cleanup(hs.Close)
				c = newRawClient(t, hs.URL+"/mcp")
				c.hc = hs.Client()
			}
			c.initialize(ctx, nil)
			id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "parked"}, "task": map[string]any{}}))
			c.drainEvents()
			got := make(chan *reply, 1)
			go func() {
				r, err := c.try(ctx, "tasks/result", map[string]any{"taskId": id})
				if err != nil {
					t.Errorf("tasks/result: %v", err)
				}
				got <- r
			}()
			if mode == "parked" {
				if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
					t.Fatal(err)
				}
			} else {
				c.awaitEvent(ctx, "comment") // the primed stream: the wait blocks
				if n := br.b.ParkedWaits(); n != 0 {
					t.Errorf("%s: %d waits parked, want 0", mode, n)
				}
			}
			up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
			r := <-got
			if r == nil {
				return
			}
			if r.Err != nil || !strings.Contains(string(r.Result), "parked") {
				t.Fatalf("tasks/result: %s %+v", r.Envelope, r.Err)
			}
			if !strings.Contains(string(r.Result), id) {
				t.Errorf("tasks/result without related-task _meta (L-34): %s", r.Result)
			}
			c.mu.Lock()
			last := c.lastID
			c.mu.Unlock()
			if last == "" {
				t.Errorf("the answer event carries no id: the stream is not resumable")
			}
			if err := legacyface.AwaitParked(ctx, br.b, 0); err != nil {
				t.Fatal(err)
			}
			// The session still serves requests (its busy mark was released).
			if r := c.call(ctx, "tasks/get", map[string]any{"taskId": id}); statusOf(t, r) != "completed" {
				t.Errorf("tasks/get after the answer: %s", r.Envelope)
			}
			c.checkReceived(t)
		})
	}
}

// A client that goes away while its wait is parked is noticed at the next
// keep-alive: the wait is unregistered and its place among the principal's
// waiters (L-72) is free again.
func TestParkedClientGone(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{KeepAlive: 10 * time.Millisecond, MaxWaitersPerPrincipal: 1})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "gone"}, "task": map[string]any{}}))

	wctx, leave := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.try(wctx, "tasks/result", map[string]any{"taskId": id})
		done <- err
	}()
	if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
		t.Fatal(err)
	}
	// The one waiter place is taken: a second wait is refused at once.
	if r := c.call(ctx, "tasks/result", map[string]any{"taskId": id}); r.Err == nil || !strings.Contains(r.Err.Message, "too many blocked tasks/result") {
		t.Fatalf("second wait with the limit held: %s", r.Envelope)
	}
	leave() // the client closes its connection
	if err := <-done; err == nil {
		t.Fatal("the abandoned wait returned no error")
	}
	if err := legacyface.AwaitParked(ctx, br.b, 0); err != nil {
		t.Fatal(err)
	}
	// The place is free again: a new wait parks, then gets the answer.
	got := make(chan *reply, 1)
	go func() { got <- c.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
		t.Fatal(err)
	}
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	if r := <-got; r.Err != nil || !strings.Contains(string(r.Result), "gone") {
		t.Fatalf("tasks/result after the first client left: %s", r.Envelope)
	}
}

// DELETE of the session ends its parked waits (as it ends blocking ones).
func TestParkedSessionDelete(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	got := make(chan *reply, 1)
	go func() {
		r, _ := c.try(ctx, "tasks/result", map[string]any{"taskId": id})
		got <- r
	}()
	if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, br.url, nil)
	c.headers(req.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	select {
	case r := <-got:
		if r != nil && r.Result != nil {
			t.Errorf("a wait of a deleted session got a result: %s", r.Envelope)
		}
	case <-ctx.Done():
		t.Fatal("DELETE did not end the parked wait")
	}
	if err := legacyface.AwaitParked(ctx, br.b, 0); err != nil {
		t.Fatal(err)
	}
}

// Shutdown hands parked waits back as it does blocking ones: with a data
// directory (events die with the process) the answer says to call again;
// with events kept outside the process the stream ends unanswered, for the
// client to resume it elsewhere with Last-Event-ID.
func TestParkedShutdown(t *testing.T) {
	for _, store := range []string{"datadir", "memory"} {
		t.Run(store, func(t *testing.T) {
			ctx := ctxT(t, 20*time.Second)
			up := startUpstream(t, demo.Options{})
			cfg := legacyface.Config{}
			if store == "datadir" {
				cfg.DataDir = t.TempDir()
			}
			br := startBridge(t, up, cfg)
			c := newRawClient(t, br.url)
			c.initialize(ctx, nil)
			id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
			type result struct {
				r   *reply
				err error
			}
			got := make(chan result, 1)
			go func() {
				r, err := c.try(ctx, "tasks/result", map[string]any{"taskId": id})
				got <- result{r, err}
			}()
			if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
				t.Fatal(err)
			}
			if err := br.b.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			res := <-got
			if store == "datadir" {
				if res.r == nil || res.r.Err == nil || !strings.Contains(res.r.Err.Message, "call again") {
					t.Fatalf("parked wait at shutdown: %+v %v", res.r, res.err)
				}
			} else {
				c.mu.Lock()
				last := c.lastID
				c.mu.Unlock()
				if res.err == nil || last == "" {
					t.Fatalf("parked wait at shutdown: %+v %v, last event id %q; want the stream ended unanswered and resumable", res.r, res.err, last)
				}
			}
			if err := legacyface.AwaitParked(ctx, br.b, 0); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Parked waits hold no goroutine: 200 blocked tasks/result calls on raw
// HTTP/1.1 connections (no client goroutines in this process) add only the
// hubs' goroutines (one per task), whereas blocking waits add at least one
// each. Every answer then arrives intact on its connection.
func TestParkedNoGoroutinePerWaiter(t *testing.T) {
	const waiters, tasks = 200, 4
	for _, parked := range []bool{true, false} {
		t.Run(fmt.Sprintf("parked=%v", parked), func(t *testing.T) {
			ctx := ctxT(t, 60*time.Second)
			up := startUpstream(t, demo.Options{})
			br := startBridge(t, up, legacyface.Config{DisableParkedWaits: !parked, MaxWaitersPerPrincipal: -1})
			c := newRawClient(t, br.url)
			c.initialize(ctx, nil)
			ids := make([]string, tasks)
			for i := range ids {
				ids[i] = taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": fmt.Sprintf("task-%d", i)}, "task": map[string]any{}}))
			}
			c.hc.CloseIdleConnections()
			addr := strings.TrimPrefix(strings.TrimSuffix(br.url, "/mcp"), "http://")
			conns := make([]*bufio.Reader, waiters)
			resps := make([]*http.Response, waiters)
			// open starts waits [from, to) and returns once they all block.
			open := func(from, to int) {
				for i := from; i < to; i++ {
					conn, err := net.Dial("tcp", addr)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { conn.Close() })
					body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":%q}}`, i+1, ids[i%tasks])
					fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s",
						addr, c.sessionID(), len(body), body)
					conns[i] = bufio.NewReader(conn)
				}
				if parked {
					if err := legacyface.AwaitParked(ctx, br.b, to); err != nil {
						t.Fatal(err)
					}
				}
				// Each wait primed its stream once it blocked: its head is there.
				for i := from; i < to; i++ {
					resp, err := http.ReadResponse(conns[i], nil)
					if err != nil {
						t.Fatalf("wait %d: %v", i, err)
					}
					if parked && !resp.Close {
						t.Errorf("wait %d: a parkable stream without Connection: close", i)
					}
					resps[i] = resp
				}
			}
			// One wait per task first: the watchers, the upstream streams
			// and the hubs exist from then on.
			open(0, tasks)
			base := runtime.NumGoroutine()
			open(tasks, waiters)
			grew := runtime.NumGoroutine() - base
			// Slack for what comes and goes meanwhile (the watchers'
			// upstream polls, a handler still returning): far below one per
			// wait.
			if parked && grew > waiters/5 {
				t.Errorf("%d more parked waits added %d goroutines, want about none", waiters-tasks, grew)
			}
			if !parked && grew < waiters-tasks {
				t.Errorf("%d more blocking waits added only %d goroutines: the measure cannot tell", waiters-tasks, grew)
			}
			t.Logf("%d more waits: %d more goroutines", waiters-tasks, grew)
			for _, id := range ids {
				up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
			}
			for i, resp := range resps {
				b, err := io.ReadAll(resp.Body) // a chunked body must end with its terminating chunk
				if err != nil {
					t.Fatalf("wait %d: body: %v (%q)", i, err, b)
				}
				var ans struct {
					ID     int             `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				for _, line := range strings.Split(string(b), "\n") {
					if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"result"`) {
						_ = json.Unmarshal([]byte(d), &ans)
					}
				}
				if ans.ID != i+1 || !strings.Contains(string(ans.Result), fmt.Sprintf("task-%d", i%tasks)) {
					t.Fatalf("wait %d: answer %q", i, b)
				}
			}
			if err := legacyface.AwaitParked(ctx, br.b, 0); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A plain tools/call the upstream turned into a task parks like a
// tasks/result, still holding its place among the principal's calls (L-73)
// until its plain result (no task, no related-task _meta) goes out.
func TestParkedPlainCall(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{MaxTasksPerPrincipal: 1})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	got := make(chan *reply, 1)
	go func() {
		r, err := c.try(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "plain"}})
		if err != nil {
			t.Errorf("tools/call: %v", err)
		}
		got <- r
	}()
	if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
		t.Fatal(err)
	}
	if r := c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}); r.Err == nil || !strings.Contains(r.Err.Message, "too many concurrent tools/call") {
		t.Fatalf("a second call while the parked one holds the only place: %s", r.Envelope)
	}
	ids := up.srv.TaskIDs()
	if len(ids) != 1 {
		t.Fatalf("upstream tasks %v, want one", ids)
	}
	up.srv.CompleteNow(ids[0])
	r := <-got
	if r == nil || r.Err != nil || !strings.Contains(string(r.Result), "plain") ||
		strings.Contains(string(r.Result), "taskId") || strings.Contains(string(r.Result), "related-task") {
		t.Fatalf("plain tools/call: %+v", r)
	}
	if err := legacyface.AwaitParked(ctx, br.b, 0); err != nil {
		t.Fatal(err)
	}
	if r := c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "again"}}); r.Err != nil {
		t.Errorf("a call after the parked one ended: %s", r.Envelope)
	}
	c.checkReceived(t)
}

// notifications/cancelled for a parked plain tools/call ends it unanswered
// and abandons its task: the client never saw the task, so the upstream is
// asked to stop it (as for a blocking wait).
func TestParkedPlainCallCancelled(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	c.mu.Lock()
	c.next = 900 // the tools/call gets id 901
	c.mu.Unlock()
	got := make(chan *reply, 1)
	go func() {
		r, _ := c.try(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "never"}})
		got <- r
	}()
	if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
		t.Fatal(err)
	}
	if n := c.notify(ctx, "notifications/cancelled", map[string]any{"requestId": 901, "reason": "user gave up"}); n.Status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: HTTP %d %s", n.Status, n.Body)
	}
	if r := <-got; r != nil && r.Envelope != nil {
		t.Errorf("a cancelled call was answered: %s", r.Envelope)
	}
	up.rec.awaitHit(t, ctx, "tasks/cancel")
	if err := legacyface.AwaitParked(ctx, br.b, 0); err != nil {
		t.Fatal(err)
	}
}

// A parked stream is resumable like any other (L-63, Last-Event-ID): the
// client cuts it, the bridge notices at its next keep-alive, and a GET with
// the priming event's id waits again (parked too) and gets the answer.
func TestParkedStreamResumed(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{KeepAlive: 10 * time.Millisecond})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "resumed"}, "task": map[string]any{}}))
	s := openSSE(t, ctx, c, br.url, rpcBody(31, "tasks/result", map[string]any{"taskId": id}), "")
	primeID := s.prime()
	if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
		t.Fatal(err)
	}
	s.cut()
	if err := legacyface.AwaitParked(ctx, br.b, 0); err != nil {
		t.Fatal(err)
	}
	r := openSSE(t, ctx, c, br.url, nil, primeID)
	if r.status != http.StatusOK || r.sc == nil {
		t.Fatalf("resume: HTTP %d %s", r.status, r.body)
	}
	if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
		t.Fatal(err)
	}
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	r.answer("31", "resumed")
	if err := legacyface.AwaitParked(ctx, br.b, 0); err != nil {
		t.Fatal(err)
	}
}

// A large answer (written off the hub's goroutine) reaches every parked
// wait intact.
func TestParkedLargeAnswer(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	text := strings.Repeat("large answer ", 20<<10) // 260 KiB
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": text}, "task": map[string]any{}}))
	const waits = 3
	got := make(chan *reply, waits)
	for range waits {
		go func() {
			r, err := c.try(ctx, "tasks/result", map[string]any{"taskId": id})
			if err != nil {
				t.Errorf("tasks/result: %v", err)
			}
			got <- r
		}()
	}
	if err := legacyface.AwaitParked(ctx, br.b, waits); err != nil {
		t.Fatal(err)
	}
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	for range waits {
		r := <-got
		if r == nil {
			t.Fatal("tasks/result of a large answer failed")
		}
		if r.Err != nil || !strings.Contains(string(r.Result), text) {
			t.Fatalf("tasks/result of a large answer: %d bytes, error %+v", len(r.Result), r.Err)
		}
	}
}
