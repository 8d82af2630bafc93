package modernup

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// envDemoStdio makes the test binary act as a stdio demo upstream, so
// NewCommand is tested with a real child process.
const envDemoStdio = "TASKSBRIDGE_UPSTREAM_TEST_DEMO_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(envDemoStdio) == "1" {
		s := demo.New(demo.Options{PollInterval: 10 * time.Millisecond})
		_ = s.ServeIO(context.Background(), os.Stdin, os.Stdout)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func commandClient(t *testing.T) *Client {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := NewCommand("command upstream.test (demo)", func() *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envDemoStdio+"=1")
		cmd.Stderr = os.Stderr
		return cmd
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// stdio upstream (a child process): discover, a tool, a task observed through
// notifications/tasks correlated by subscriptionId (M-14, M-33).
func TestStdioCommandTaskPush(t *testing.T) {
	c := commandClient(t)
	ctx := ctxT(t)
	if got, err := c.ProbeEra(ctx); err != nil || got != era.Modern {
		t.Fatalf("ProbeEra = %v, %v", got, err)
	}
	out, err := c.CallTool(ctx, tool("echo", map[string]any{"text": "over stdio"}), CallOptions{})
	if err != nil || out.Type != modern.ResultComplete || !strings.Contains(string(out.Raw), "over stdio") {
		t.Fatalf("echo = %+v, %v", out, err)
	}
	id := createTask(t, c, "slow_task", map[string]any{"ms": 200, "text": "pushed"}, CallOptions{})
	ts, err := c.ListenTasks(ctx, []string{id}, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	if len(ts.Acked) != 1 || ts.Acked[0] != id {
		t.Fatalf("acked %v", ts.Acked)
	}
	for d := range ts.Tasks {
		if d.TaskID != id {
			t.Fatalf("notification for %s", d.TaskID)
		}
		if d.Status == modern.StatusCompleted {
			if !strings.Contains(string(d.Result), "pushed") {
				t.Fatalf("result %s", d.Result)
			}
			return
		}
	}
	t.Fatalf("stream ended without completion: %v", ts.Err())
}

// An exited stdio upstream is ErrUnavailable; the next call starts it again.
func TestStdioRestartAfterExit(t *testing.T) {
	c := commandClient(t)
	if _, err := c.Discover(ctxT(t), CallOptions{}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	m := c.shared
	c.mu.Unlock()
	m.close() // as if the process died under us
	if _, err := c.Discover(ctxT(t), CallOptions{}); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

// pipeUpstream connects a Client to an in-process stdio server through pipes
// and records every line the client writes.
type pipeUpstream struct {
	mu    sync.Mutex
	lines [][]byte
}

func (p *pipeUpstream) written() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.lines...)
}

type teeWriter struct {
	p *pipeUpstream
	w io.WriteCloser
}

func (t teeWriter) Write(b []byte) (int, error) {
	t.p.mu.Lock()
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		t.p.lines = append(t.p.lines, append([]byte(nil), l...))
	}
	t.p.mu.Unlock()
	return t.w.Write(b)
}
func (t teeWriter) Close() error { return t.w.Close() }

// pipeClient returns a shared-connection Client whose upstream is serve(r, w).
func pipeClient(t *testing.T, serve func(r io.ReadCloser, w io.WriteCloser)) (*Client, *pipeUpstream) {
	t.Helper()
	p := &pipeUpstream{}
	c := &Client{Target: "pipe", Shared: true, ClientInfo: defaultClientInfo()}
	c.Dial = func(ctx context.Context) (mcp.Connection, error) {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		go serve(sr, sw)
		return (&mcp.IOTransport{Reader: cr, Writer: teeWriter{p, cw}}).Connect(ctx)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, p
}

// M-12, M-14: on stdio, closing a listen sends notifications/cancelled for
// the listen request; every line the client wrote is valid.
func TestStdioListenCancelSendsNotificationsCancelled(t *testing.T) {
	srv := demo.New(demo.Options{PollInterval: 10 * time.Millisecond, Clock: demo.NewFakeClock(t0)})
	defer srv.Close()
	c, p := pipeClient(t, func(r io.ReadCloser, w io.WriteCloser) { _ = srv.ServeIO(context.Background(), r, w) })
	id := createTask(t, c, "slow_task", map[string]any{"ms": 60_000, "text": "x"}, CallOptions{})
	ctx, cancel := context.WithCancel(ctxT(t))
	ts, err := c.ListenTasks(ctx, []string{id}, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := <-ts.Tasks; d == nil || d.Status != modern.StatusWorking {
		t.Fatalf("first notification %+v", d)
	}
	srv.CompleteNow(id)
	if d := <-ts.Tasks; d == nil || d.Status != modern.StatusCompleted {
		t.Fatalf("second notification %+v", d)
	}
	cancel()
	for range ts.Tasks {
	}
	if err := ts.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("stream err %v", err)
	}

	var listenID any
	var cancelled bool
	v := schemacheck.Load(t)
	for _, l := range p.written() {
		msg, err := jsonrpc.DecodeMessage(l)
		if err != nil {
			t.Fatalf("client wrote %q: %v", l, err)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			continue
		}
		switch req.Method {
		case modern.MethodSubscriptionsListen:
			listenID = req.ID.Raw()
			v.Check(t, schemacheck.Modern, "SubscriptionsListenRequest", l)
		case modern.NotificationCancelled:
			v.Check(t, schemacheck.Modern, "CancelledNotification", l)
			var cp struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(req.Params, &cp)
			if id, ok := idFromJSON(cp.RequestID); ok && listenID != nil && id.Raw() == listenID {
				cancelled = true
			}
		}
	}
	if !cancelled {
		t.Fatalf("no notifications/cancelled for listen id %v", listenID)
	}
}

// fakeStdio is a scripted stdio upstream: for tools/call it sends progress
// (with the token it received), a log message, a server→client request, and
// then the result; a tools/call named "hang" is never answered.
func fakeStdio(t *testing.T, got chan<- *jsonrpc.Message) func(io.ReadCloser, io.WriteCloser) {
	return func(r io.ReadCloser, w io.WriteCloser) {
		defer w.Close()
		sc := bufio.NewScanner(r)
		var wmu sync.Mutex
		send := func(m jsonrpc.Message) {
			b, _ := jsonrpc.EncodeMessage(m)
			wmu.Lock()
			defer wmu.Unlock()
			_, _ = w.Write(append(b, '\n'))
		}
		for sc.Scan() {
			msg, err := jsonrpc.DecodeMessage(sc.Bytes())
			if err != nil {
				t.Errorf("fake upstream: %v", err)
				return
			}
			if got != nil {
				got <- &msg
			}
			req, ok := msg.(*jsonrpc.Request)
			if !ok || !req.IsCall() {
				continue
			}
			var p struct {
				Name string `json:"name"`
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			_ = json.Unmarshal(req.Params, &p)
			if p.Name == "hang" {
				continue
			}
			if len(p.Meta.Token) > 0 {
				send(&jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":` + string(p.Meta.Token) + `,"progress":1,"total":2}`)})
			}
			send(&jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"hello"}`)})
			sid, _ := jsonrpc.MakeID("srv-1")
			send(&jsonrpc.Request{ID: sid, Method: "elicitation/create", Params: json.RawMessage(`{}`)})
			send(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"resultType":"complete","content":[]}`)})
		}
	}
}

// Progress of one call reaches that call's hook with the caller's own token;
// un-attributable notifications go to OnNotification; a server→client request
// is refused with -32601 (2026 servers send none).
func TestStdioProgressRoutingAndServerRequests(t *testing.T) {
	got := make(chan *jsonrpc.Message, 32)
	c, _ := pipeClient(t, fakeStdio(t, got))
	var mu sync.Mutex
	var global []string
	c.OnNotification = func(method string, _ json.RawMessage) {
		mu.Lock()
		global = append(global, method)
		mu.Unlock()
	}
	var notes []json.RawMessage
	params := json.RawMessage(`{"name":"x","_meta":{"progressToken":"client-token-7"}}`)
	_, err := c.Call(ctxT(t), modern.MethodToolsCall, params, CallOptions{OnNotify: func(method string, p json.RawMessage) {
		notes = append(notes, p) // called from the reader goroutine, before the response
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(string(notes[0]), `"progressToken":"client-token-7"`) {
		t.Fatalf("progress delivered %s, want the caller's token restored", notes)
	}
	// The upstream saw our token, not the caller's.
	first := <-got
	var sent struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	b, _ := jsonrpc.EncodeMessage(*first)
	_ = json.Unmarshal(b, &sent)
	if tok := string(sent.Params.Meta["progressToken"]); tok == `"client-token-7"` || tok == "" {
		t.Fatalf("upstream saw token %s, want a rewritten one", tok)
	}
	// The refusal of the server's request.
	for m := range got {
		if r, ok := (*m).(*jsonrpc.Response); ok {
			var we *jsonrpc.Error
			if !errors.As(r.Error, &we) || we.Code != rpc.CodeMethodNotFound {
				t.Fatalf("refusal = %+v", r)
			}
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(global) != 1 || global[0] != "notifications/message" {
		t.Fatalf("OnNotification got %v", global)
	}
}

// M-12 on stdio: an abandoned call sends notifications/cancelled and returns
// the context's error.
func TestStdioCancelCall(t *testing.T) {
	got := make(chan *jsonrpc.Message, 32)
	c, _ := pipeClient(t, fakeStdio(t, got))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, modern.MethodToolsCall, json.RawMessage(`{"name":"hang"}`), CallOptions{})
		errc <- err
	}()
	callMsg := <-got
	callID := (*callMsg).(*jsonrpc.Request).ID
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) || rpc.CodeOf(err) != rpc.CodeInternalError || Retryable(err) {
		t.Fatalf("err = %v", err)
	}
	n := (*<-got).(*jsonrpc.Request)
	var cp struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	_ = json.Unmarshal(n.Params, &cp)
	if id, ok := idFromJSON(cp.RequestID); n.Method != modern.NotificationCancelled || !ok || id != callID {
		t.Fatalf("after cancel the upstream got %s %s, want notifications/cancelled for %v", n.Method, n.Params, callID.Raw())
	}
}
