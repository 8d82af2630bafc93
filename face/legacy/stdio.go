package legacyface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// ServeStdio serves one legacy client reading newline-delimited JSON-RPC
// from r and writing to w (stdin/stdout for `bridge serve --stdio`), with
// the same server code as HTTP. It returns when the client closes its input
// or ctx ends. A stdio client has no credentials: its tasks are scoped to
// its session.
func (b *Bridge) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	s := b.newSession(randomID(), "", transportStdio)
	srv := b.newServer(s)
	s.srv = srv
	t := &stdioTransport{b: b, s: s, inner: &mcp.IOTransport{Reader: readCloser{r}, Writer: writeCloser{w}}}
	ss, err := srv.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("face: stdio: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- ss.Wait() }()
	select {
	case err = <-waited:
	case <-ctx.Done():
		ss.Close()
		<-waited
		err = ctx.Err()
	case <-b.drain.Done():
		ss.Close()
		err = <-waited
	}
	b.endSession(s, false)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) && !errors.Is(err, mcp.ErrConnectionClosed) {
		return fmt.Errorf("face: stdio: %w", err)
	}
	return nil
}

type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }

// stdioTransport gives go-sdk a connection that does for stdio what the
// bridge's HTTP handler does for HTTP: a request record per incoming call
// (raw params), a session id, and a way to write notifications go-sdk has no
// API for.
type stdioTransport struct {
	b     *Bridge
	s     *session
	inner mcp.Transport
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	conn := &stdioConn{Connection: c, b: t.b, s: t.s, calls: map[string]string{}, out: map[string]jsonrpc.ID{},
		changed: make(chan struct{}, 1)}
	t.s.mu.Lock()
	t.s.notify = conn.notify
	t.s.mu.Unlock()
	return conn, nil
}

// stdioConn holds the end of the client's input back until every request
// read before it has been answered.
//
// Why: go-sdk's jsonrpc2 connection treats a read error (io.EOF when a host
// pipes its requests and closes stdin) as the end of the connection: it
// cancels every call still queued or running and refuses to write their
// responses. A host doing `printf 'initialize\n...\ntools/call\n' | bridge
// serve --stdio` got nothing back, and because the cancelled initialize never
// reached go-sdk (the bridge asks the upstream first) while the already
// queued notifications/initialized (notifications are not cancelled) did,
// go-sdk logged "initialized before initialize". With the end held back,
// go-sdk keeps its ordering guarantees: initialize is handled synchronously
// and its reply written before the next message is dispatched, so the
// handshake completes before anything piped after it runs.
type stdioConn struct {
	mcp.Connection
	b *Bridge
	s *session

	mu      sync.Mutex
	calls   map[string]string     // JSON-RPC id → request record nonce, until answered
	out     map[string]jsonrpc.ID // our server→client calls the client has not answered
	closed  bool
	changed chan struct{} // a call was answered, a server→client call written, or Close (cap 1)

	readErr error // the input's end, once seen (Read is called by one goroutine only)
}

func (c *stdioConn) SessionID() string { return c.s.id }

func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// errInputClosed answers a server→client call (elicitation, sampling, roots)
// the client can no longer answer because it closed its input.
var errInputClosed = &rpc.Error{Code: rpc.CodeInternalError, Message: "client closed its input before answering"}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.readErr != nil {
		return c.holdEnd(ctx)
	}
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed || ctx.Err() != nil {
			return nil, err // we are being shut down: nothing to hold back
		}
		// io.EOF, or a line go-sdk cannot read (it stops reading there):
		// either way nothing more comes in, but what came before is owed.
		c.readErr = err
		return c.holdEnd(ctx)
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !m.IsCall() {
			break
		}
		ri := newReqInfo(m.Method, m.Params, "")
		nonce := c.b.nonceSeed + "." + randomID()
		c.b.reqs.Store(nonce, ri)
		c.mu.Lock()
		if old, ok := c.calls[idKey(m.ID)]; ok { // a reused id: the old record is stale
			c.finish(old)
		}
		c.calls[idKey(m.ID)] = nonce
		c.mu.Unlock()
		m.Extra = &mcp.RequestExtra{Header: http.Header{hdrNonce: []string{nonce}}}
	case *jsonrpc.Response:
		c.mu.Lock()
		delete(c.out, idKey(m.ID))
		c.mu.Unlock()
	}
	return msg, nil
}

// holdEnd returns the input's end once no request read before it is still
// unanswered. Meanwhile a server→client call made while handling one of them
// gets an error response in the client's stead (it can never answer), so the
// handler that made it can finish.
func (c *stdioConn) holdEnd(ctx context.Context) (jsonrpc.Message, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, c.readErr
		}
		for k, id := range c.out {
			delete(c.out, k)
			c.mu.Unlock()
			return &jsonrpc.Response{ID: id, Error: errInputClosed}, nil
		}
		open := len(c.calls)
		c.mu.Unlock()
		if open == 0 {
			return nil, c.readErr
		}
		select {
		case <-c.changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// signal wakes holdEnd (c.mu held or not; never blocks).
func (c *stdioConn) signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		// Recorded before the write: the answer may be read right after it.
		c.mu.Lock()
		c.out[idKey(req.ID)] = req.ID
		c.mu.Unlock()
		defer c.signal()
	}
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		k := idKey(resp.ID)
		if nonce, ok := c.calls[k]; ok {
			delete(c.calls, k)
			c.finish(nonce)
		}
		c.mu.Unlock()
		c.signal()
	}
	return err
}

// finish drops a request record (c.mu held).
func (c *stdioConn) finish(nonce string) {
	if v, ok := c.b.reqs.LoadAndDelete(nonce); ok {
		v.(*reqInfo).finish()
	}
}

func (c *stdioConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	err := c.Connection.Close()
	c.mu.Lock()
	for k, nonce := range c.calls {
		delete(c.calls, k)
		c.finish(nonce)
	}
	c.mu.Unlock()
	c.signal()
	return err
}

// notify writes a notification directly on the connection.
func (c *stdioConn) notify(method string, params json.RawMessage) error {
	return c.Connection.Write(context.Background(), &jsonrpc.Request{Method: method, Params: params})
}
