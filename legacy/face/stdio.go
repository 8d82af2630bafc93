package face

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
	s.close()
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
	conn := &stdioConn{Connection: c, b: t.b, s: t.s, calls: map[string]string{}}
	t.s.mu.Lock()
	t.s.notify = conn.notify
	t.s.mu.Unlock()
	return conn, nil
}

type stdioConn struct {
	mcp.Connection
	b *Bridge
	s *session

	mu    sync.Mutex
	calls map[string]string // JSON-RPC id → request record nonce
}

func (c *stdioConn) SessionID() string { return c.s.id }

func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		return msg, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		ri := &reqInfo{method: req.Method, raw: req.Params, done: make(chan struct{})}
		nonce := c.b.nonceSeed + "." + randomID()
		c.b.reqs.Store(nonce, ri)
		c.mu.Lock()
		if old, ok := c.calls[idKey(req.ID)]; ok { // a reused id: the old record is stale
			c.finish(old)
		}
		c.calls[idKey(req.ID)] = nonce
		c.mu.Unlock()
		req.Extra = &mcp.RequestExtra{Header: http.Header{hdrNonce: []string{nonce}}}
	}
	return msg, nil
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		k := idKey(resp.ID)
		if nonce, ok := c.calls[k]; ok {
			delete(c.calls, k)
			c.finish(nonce)
		}
		c.mu.Unlock()
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
	err := c.Connection.Close()
	c.mu.Lock()
	for k, nonce := range c.calls {
		delete(c.calls, k)
		c.finish(nonce)
	}
	c.mu.Unlock()
	return err
}

// notify writes a notification directly on the connection.
func (c *stdioConn) notify(method string, params json.RawMessage) error {
	return c.Connection.Write(context.Background(), &jsonrpc.Request{Method: method, Params: params})
}
