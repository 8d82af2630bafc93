package legacyface_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// stdioClient is a raw 2025-11-25 client on a newline-delimited stream.
type stdioClient struct {
	t  *testing.T
	w  io.Writer
	mu sync.Mutex

	next     int
	waiting  map[string]chan json.RawMessage
	handler  func(method string, params json.RawMessage) (any, *rpc.Error)
	notes    chan json.RawMessage
	received []json.RawMessage
}

func newStdioClient(t *testing.T, r io.Reader, w io.Writer) *stdioClient {
	c := &stdioClient{t: t, w: w, waiting: map[string]chan json.RawMessage{}, notes: make(chan json.RawMessage, 32)}
	go c.read(r)
	return c
}

func (c *stdioClient) write(v any) {
	b, _ := json.Marshal(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Errorf("stdio write: %v", err)
	}
}

func (c *stdioClient) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		msg := append(json.RawMessage(nil), sc.Bytes()...)
		c.mu.Lock()
		c.received = append(c.received, msg)
		c.mu.Unlock()
		var probe struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(msg, &probe)
		switch {
		case probe.Method != "" && probe.ID != nil:
			c.mu.Lock()
			h := c.handler
			c.mu.Unlock()
			env := map[string]any{"jsonrpc": "2.0", "id": probe.ID}
			if h == nil {
				env["error"] = rpc.Errorf(rpc.CodeMethodNotFound, "no handler")
			} else if res, e := h(probe.Method, probe.Params); e != nil {
				env["error"] = e
			} else {
				env["result"] = res
			}
			c.write(env)
		case probe.Method != "":
			c.notes <- msg
		default:
			c.mu.Lock()
			ch := c.waiting[string(probe.ID)]
			delete(c.waiting, string(probe.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- msg
			}
		}
	}
}

func (c *stdioClient) call(ctx context.Context, method string, params any) *reply {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan json.RawMessage, 1)
	c.waiting[mustJSON(id)] = ch
	c.mu.Unlock()
	env := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		env["params"] = params
	}
	c.write(env)
	select {
	case m := <-ch:
		r := &reply{}
		r.fill(m)
		return r
	case <-ctx.Done():
		c.t.Fatalf("%s over stdio: no answer", method)
		return nil
	}
}

// Over stdio, `bridge serve --stdio` serves one legacy client with the
// same server: the handshake, task creation, notifications/tasks/status
// (which go-sdk cannot send over HTTP; here the bridge writes it on the
// connection, L-61) and the input_required side channel during tasks/result.
func TestStdioLegacyClient(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{StatusNotifications: true})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- br.b.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	c := newStdioClient(t, outR, inW)
	init := c.call(ctx, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": defaultCaps,
		"clientInfo": map[string]any{"name": "stdio-legacy", "version": "1"}})
	if init.Err != nil || !bytes.Contains(init.Result, []byte(`"requests":{"tools":{"call":{}}}`)) {
		t.Fatalf("initialize: %s", init.Envelope)
	}
	c.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})

	cr := c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "stdio"}, "task": map[string]any{}})
	id := taskIDOf(t, cr)
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	v := schemacheck.Load(t)
	for done := false; !done; {
		select {
		case n := <-c.notes:
			v.Check(t, schemacheck.Legacy, "TaskStatusNotification", n)
			done = bytes.Contains(n, []byte(`"completed"`)) && bytes.Contains(n, []byte(id))
		case <-ctx.Done():
			t.Fatal("no completed notifications/tasks/status over stdio")
		}
	}
	if r := c.call(ctx, "tasks/result", map[string]any{"taskId": id}); r.Err != nil || !bytes.Contains(r.Result, []byte(`"stdio"`)) {
		t.Errorf("tasks/result: %s", r.Envelope)
	}

	c.mu.Lock()
	c.handler = func(method string, params json.RawMessage) (any, *rpc.Error) {
		if method != "elicitation/create" || !bytes.Contains(params, []byte(legacyRelatedTask)) {
			return nil, rpc.Errorf(rpc.CodeInvalidParams, "unexpected %s %s", method, params)
		}
		return map[string]any{"action": "accept", "content": map[string]any{"answer": "piped"}}, nil
	}
	c.mu.Unlock()
	ask := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Q?"}, "task": map[string]any{}}))
	if r := c.call(ctx, "tasks/result", map[string]any{"taskId": ask}); r.Err != nil || !bytes.Contains(r.Result, []byte(`"piped"`)) {
		t.Errorf("tasks/result with elicitation: %s", r.Envelope)
	}
	if r := c.call(ctx, "tasks/get", map[string]any{"taskId": "unknown"}); r.Err == nil || r.Err.Code != rpc.CodeInvalidParams {
		t.Errorf("unknown task over stdio: %s", r.Envelope)
	}

	inW.Close() // EOF: the client is gone
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeStdio did not return after EOF")
	}
	c.mu.Lock()
	msgs := append([]json.RawMessage(nil), c.received...)
	c.mu.Unlock()
	for _, m := range msgs {
		v.Check(t, schemacheck.Legacy, "JSONRPCMessage", m)
	}
}
