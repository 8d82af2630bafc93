package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// stdioPeer is a raw newline-delimited JSON-RPC client of a Server served
// with ServeIO.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter
	msgs chan []byte
	done chan error
}

func serveStdio(t *testing.T, s *Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, msgs: make(chan []byte, 64), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		p.done <- s.ServeIO(ctx, inR, outW)
		outW.Close()
	}()
	go func() {
		defer close(p.msgs)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.msgs <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		<-p.done
	})
	return p
}

func (p *stdioPeer) send(v any) {
	p.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		p.t.Fatal(err)
	}
}

func (p *stdioPeer) next() wireNote {
	p.t.Helper()
	select {
	case m, ok := <-p.msgs:
		if !ok {
			p.t.Fatal("stdio output ended")
		}
		var n wireNote
		if err := json.Unmarshal(m, &n); err != nil {
			p.t.Fatalf("bad line %s: %v", m, err)
		}
		n.raw = m
		return n
	case <-time.After(guard):
		p.t.Fatal("no message on stdout")
	}
	return wireNote{}
}

func call(id any, method string, params map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
}

func TestStdioRefusesLegacy_M44(t *testing.T) {
	v := schemacheck.Load(t)
	p := serveStdio(t, New(Options{}))
	p.send(call(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "old", "version": "1"}}))
	r := p.next()
	v.Check(t, schemacheck.Modern, "UnsupportedProtocolVersionError", r.raw)
	e := decode[rpc.Error](t, r.Error)
	data, ok := modern.UnsupportedVersionOf(&e)
	if e.Code != rpc.CodeUnsupportedProtocolVersion || !ok || data.Supported[0] != ProtocolVersion {
		t.Errorf("initialize on stdio: %s", r.raw)
	}
	p.send(call(2, "tools/list", map[string]any{}))
	if e := decode[rpc.Error](t, p.next().Error); e.Code != rpc.CodeInvalidParams {
		t.Errorf("era-less tools/list: %+v, want -32602 (M-37)", e)
	}
	p.send(call(3, "tasks/result", map[string]any{"taskId": "x", "_meta": modernMeta(true, nil)}))
	if e := decode[rpc.Error](t, p.next().Error); e.Code != rpc.CodeMethodNotFound {
		t.Errorf("tasks/result on stdio: %+v", e)
	}
}

func TestStdioTasksAndListen(t *testing.T) {
	v := schemacheck.Load(t)
	clk := NewFakeClock(t0)
	s := New(Options{Clock: clk, PollInterval: time.Millisecond})
	ended := make(chan struct{}, 4)
	f := func() { ended <- struct{}{} }
	s.listenEnded.Store(&f)
	p := serveStdio(t, s)

	p.send(call(1, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 30, "text": "stdio"},
		"_meta": modernMeta(true, nil)}))
	r := p.next()
	v.Check(t, schemacheck.Ext, "CreateTaskResult", r.Result)
	id := decode[detailed](t, r.Result).TaskID

	p.send(call("L", "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id}},
		"_meta": modernMeta(true, nil)}))
	if n := p.next(); n.Method != "notifications/subscriptions/acknowledged" || subIDOf(t, n.Params) != "L" {
		t.Fatalf("ack %s", n.raw)
	}
	if n := p.next(); n.Method != "notifications/tasks" {
		t.Fatalf("initial %s", n.raw)
	}
	// Ordinary requests keep working beside the listen.
	p.send(call(2, "tasks/get", map[string]any{"taskId": id, "_meta": modernMeta(true, nil)}))
	if r := p.next(); r.ID != float64(2) || decode[detailed](t, r.Result).Status != modern.StatusWorking {
		t.Fatalf("tasks/get on stdio: %s", r.raw)
	}
	clk.Advance(30 * time.Millisecond)
	n := p.next()
	v.Check(t, schemacheck.Ext, "TaskStatusNotification", n.raw)
	if d := decode[detailed](t, n.Params); d.Status != modern.StatusCompleted {
		t.Fatalf("pushed %s", n.raw)
	}
	// notifications/cancelled ends the listen (stdio cancellation, M-12).
	p.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "L"}})
	select {
	case <-ended:
	case <-time.After(guard):
		t.Fatal("listen not ended by notifications/cancelled")
	}
	// A listen without the extension: -32021 (M-61).
	p.send(call(3, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id}},
		"_meta": modernMeta(false, nil)}))
	if e := decode[rpc.Error](t, p.next().Error); e.Code != rpc.CodeMissingRequiredClientCapability {
		t.Errorf("listen without extension: %+v", e)
	}
}

func TestStdioListenEndsGracefullyOnClose(t *testing.T) {
	s := New(Options{Clock: NewFakeClock(t0)})
	p := serveStdio(t, s)
	p.send(call(1, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 30, "text": "x"},
		"_meta": modernMeta(true, nil)}))
	id := decode[detailed](t, p.next().Result).TaskID
	p.send(call(7, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id}},
		"_meta": modernMeta(true, nil)}))
	p.next() // ack
	p.next() // current state
	s.Close()
	r := p.next()
	if r.ID != float64(7) || r.Result == nil {
		t.Fatalf("want the listen result, got %s", r.raw)
	}
	v := schemacheck.Load(t)
	v.Check(t, schemacheck.Modern, "SubscriptionsListenResultResponse", r.raw)
}

func TestStdioWithGoSDKClient(t *testing.T) {
	s := New(Options{Clock: NewFakeClock(t0)})
	cR, sW := io.Pipe()
	sR, cW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.Run(ctx, &mcp.IOTransport{Reader: sR, Writer: sW}) }()
	cs, err := newSDKClient(t, false).Connect(ctx, keepTask{&mcp.IOTransport{Reader: cR, Writer: cW}},
		&mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	ct := callForTask(t, ctx, cs, "error_task", map[string]any{"reason": "bad"})
	g, _ := sdkGet(t, ctx, cs, ct.TaskID)
	if _, isErr := textOf(t, g.Result); g.Status != modern.StatusCompleted || !isErr {
		t.Errorf("error_task over stdio: %s %s", g.Status, g.Result)
	}
	cs.Close()
	if err := <-served; err != nil && ctx.Err() == nil {
		t.Logf("Run returned %v", err)
	}
}
