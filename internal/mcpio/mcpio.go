// Package mcpio is the transport plumbing the module's servers share — the
// legacy face (face/legacy), the modern face (face/modern) and the embedded
// demo server (internal/demo): the stdio connection (Conn), the JSON-RPC
// answer writer (AppendResponse, WriteJSON), params and results passed
// through go-sdk untouched (RawParams, RawResult), JSON-RPC error answers
// over HTTP, task-listen SSE streams and the bookkeeping of task listens on
// a stdio connection. The modern face and the demo take subscriptions/listen
// for task ids before go-sdk sees it (go-sdk v1.8.0 has no task filter and
// cannot send notifications/tasks), so both need the same framing; what a
// listen reports stays with each server. The two upstream clients
// (upstream/legacy, upstream/modern) read SSE answers with its EventReader.
package mcpio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// WriteRPCError answers e for request id as an application/json response
// with the HTTP status.
func WriteRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, e *rpc.Error) {
	b, err := modern.EncodeError(id, e)
	if err != nil {
		http.Error(w, e.Message, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// WriteRPCErrorRaw answers with a JSON-RPC error to the request whose id is
// the raw JSON id ("null" when the request had none or could not be read),
// with its Content-Length: the router's and the edge's refusals, which hold
// the id as the client sent it.
func WriteRPCErrorRaw(w http.ResponseWriter, status int, id json.RawMessage, e *rpc.Error) {
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *rpc.Error      `json:"error"`
	}{"2.0", id, e})
	if err != nil {
		http.Error(w, e.Message, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// OpenSSE starts a text/event-stream answer (200, flushed at once) and
// returns its writers: send writes one JSON-RPC message as an event, ping a
// keep-alive comment. Each write is flushed; both are safe to call from
// several goroutines.
func OpenSSE(w http.ResponseWriter) (send func(jsonrpc.Message) error, ping func() error) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	var mu sync.Mutex
	write := func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	send = func(m jsonrpc.Message) error {
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return err
		}
		return write(fmt.Appendf(nil, "event: message\ndata: %s\n\n", b))
	}
	ping = func() error { return write([]byte(": keep-alive\n\n")) }
	return send, ping
}

// TaskListen reports whether req is a subscriptions/listen call asking for
// task notifications, and returns its params. Undecodable params are left to
// go-sdk, which answers them.
func TaskListen(req *jsonrpc.Request) (modern.ListenParams, bool) {
	if req.Method != modern.MethodSubscriptionsListen || !req.IsCall() {
		return modern.ListenParams{}, false
	}
	p, err := modern.DecodeListenParams(req.Params)
	if err != nil {
		return p, false
	}
	return p, p.Notifications.RequestsTasks()
}

// IDKey is a comparable key for a request id (jsonrpc.ID.Raw(), or an id
// decoded from JSON with integral numbers as int64).
func IDKey(raw any) string {
	b, _ := json.Marshal(raw)
	return string(bytes.TrimSpace(b))
}

// Listens are the task listens running on one connection, by request id.
// The zero value is ready.
type Listens struct {
	mu sync.Mutex
	m  map[string]*listen
	wg sync.WaitGroup
}

type listen struct {
	cancel context.CancelFunc
	done   chan struct{} // closed once the listen has returned and is unregistered
}

// Start runs run in a goroutine under a context derived from parent,
// registered under id until it returns. A listen already running under the
// same id (a reused id) is cancelled.
func (l *Listens) Start(parent context.Context, id jsonrpc.ID, run func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(parent)
	key, me := IDKey(id.Raw()), &listen{cancel: cancel, done: make(chan struct{})}
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*listen{}
	}
	if old, ok := l.m[key]; ok {
		old.cancel()
	}
	l.m[key] = me
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(me.done)
		defer cancel()
		run(ctx)
		l.mu.Lock()
		if l.m[key] == me { // not replaced by a newer listen under the same id
			delete(l.m, key)
		}
		l.mu.Unlock()
	}()
}

// Cancel ends the listen that a notifications/cancelled with params names
// (its requestId), reporting whether it named one.
func (l *Listens) Cancel(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return false
	}
	var raw any
	if json.Unmarshal(p.RequestID, &raw) != nil {
		return false
	}
	if f, ok := raw.(float64); ok && f == float64(int64(f)) {
		raw = int64(f)
	}
	key := IDKey(raw)
	l.mu.Lock()
	me, ok := l.m[key]
	delete(l.m, key)
	l.mu.Unlock()
	if ok {
		me.cancel()
	}
	return ok
}

// Wait waits until every listen started so far has returned (cancel their
// parent context, or the connection they write to, first).
func (l *Listens) Wait() { l.wg.Wait() }

// WrapTransport returns a transport whose connections are inner's wrapped by
// wrap (the stdio front of a server: it answers some messages itself before
// go-sdk reads them). wrap gets a context that outlives Connect's — its
// values without its cancellation — and the function that cancels it, for
// the connection's Close.
func WrapTransport(inner mcp.Transport, wrap func(ctx context.Context, cancel context.CancelFunc, c mcp.Connection) mcp.Connection) mcp.Transport {
	return &wrapped{inner: inner, wrap: wrap}
}

type wrapped struct {
	inner mcp.Transport
	wrap  func(context.Context, context.CancelFunc, mcp.Connection) mcp.Connection
}

func (t *wrapped) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return t.wrap(lctx, cancel, c), nil
}
