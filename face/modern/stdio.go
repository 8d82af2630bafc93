package modernface

import (
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Run serves one modern client over t (for example &mcp.StdioTransport{})
// until it disconnects or ctx ends. stdio carries no credentials: its tasks
// belong to the anonymous scope. The connection is wrapped so stdio gets what
// the HTTP front gives: era and _meta gating, the removed methods' -32601,
// and task listens (notifications correlated by subscriptionId, M-14).
func (f *Face) Run(ctx context.Context, t mcp.Transport) error {
	srv, _, err := f.gosdk()
	if err != nil {
		return err
	}
	return srv.Run(ctx, mcpio.WrapTransport(t, func(lctx context.Context, cancel context.CancelFunc, c mcp.Connection) mcp.Connection {
		return &stdioConn{Connection: c, f: f, ctx: lctx, cancel: cancel,
			calls: map[string]struct{}{}, out: map[string]jsonrpc.ID{}, changed: make(chan struct{}, 1)}
	}))
}

// ServeIO serves one client reading newline-delimited JSON-RPC from r and
// writing to w.
func (f *Face) ServeIO(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	return f.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}

// stdioConn answers some requests before go-sdk reads them, and holds the
// end of the client's input back until every request read before it has
// been answered.
//
// Why the hold: go-sdk's jsonrpc2 connection treats a read error (io.EOF
// when a host pipes its requests and closes stdin) as the end of the
// connection: it cancels every call still queued or running and refuses to
// write their responses, so `printf '...tools/call...\n' | bridge serve`
// got no answers at all (the legacy face's stdio had the same bug). Task
// listens are not held for: they have no response of their own and end
// when the connection closes.
type stdioConn struct {
	mcp.Connection
	f      *Face
	ctx    context.Context
	cancel context.CancelFunc

	listens mcpio.Listens

	mu sync.Mutex

	calls   map[string]struct{}   // ids of calls handed to go-sdk, until answered
	out     map[string]jsonrpc.ID // server→client calls the client has not answered
	closed  bool
	changed chan struct{} // a call answered, a server→client call written, or Close (cap 1)

	readErr error // the input's end, once seen (Read is called by one goroutine only)
}

// errInputClosed answers a server→client call the client can no longer
// answer because it closed its input, so the handler waiting on it ends.
var errInputClosed = &rpc.Error{Code: rpc.CodeInternalError, Message: "client closed its input before answering"}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.readErr != nil {
		return c.holdEnd(ctx)
	}
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			if closed || ctx.Err() != nil {
				return msg, err // being shut down: nothing to hold back
			}
			// io.EOF, or a line go-sdk cannot read (it stops reading
			// there): nothing more comes in, but what came before is owed.
			c.readErr = err
			return c.holdEnd(ctx)
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			c.mu.Lock()
			delete(c.out, mcpio.IDKey(resp.ID.Raw()))
			c.mu.Unlock()
			return msg, nil
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		if !req.IsCall() {
			if req.Method == legacy.MethodCancelled && c.listens.Cancel(req.Params) {
				continue
			}
			return msg, nil
		}
		if rerr := c.gate(req); rerr != nil {
			if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: rerr}); err != nil {
				return nil, err
			}
			continue
		}
		if p, ok := mcpio.TaskListen(req); ok {
			call := &call{method: req.Method, params: req.Params}
			acked, rerr := c.f.checkListen(ctx, call, p)
			if rerr != nil {
				if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: rerr}); err != nil {
					return nil, err
				}
				continue
			}
			c.startListen(call, req.ID, acked)
			continue
		}
		c.mu.Lock()
		c.calls[mcpio.IDKey(req.ID.Raw())] = struct{}{}
		c.mu.Unlock()
		return msg, nil
	}
}

// holdEnd returns the input's end once no call handed to go-sdk is still
// unanswered. Meanwhile a server→client call made while handling one gets an
// error response in the client's stead (it can never answer), so the handler
// that made it can finish.
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

// signal wakes holdEnd (never blocks).
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
		c.out[mcpio.IDKey(req.ID.Raw())] = req.ID
		c.mu.Unlock()
		defer c.signal()
	}
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.calls, mcpio.IDKey(resp.ID.Raw()))
		c.mu.Unlock()
		c.signal()
	}
	return err // unwrapped: go-sdk inspects transport errors
}

// gate applies the era and _meta rules of the HTTP front that need no
// headers: initialize → -32022 naming the versions (M-44); missing _meta →
// -32602 (M-37); unsupported version → -32022 (M-38); the removed
// tasks/result and tasks/list → -32601 (M-34, M-66).
func (c *stdioConn) gate(req *jsonrpc.Request) *rpc.Error {
	if req.Method == legacy.MethodInitialize {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return modern.ErrUnsupportedProtocolVersion(p.ProtocolVersion, c.f.opts.SupportedVersions)
	}
	meta, err := modern.DecodeRequestMeta(req.Params)
	if err == nil {
		err = meta.Validate()
	}
	if err != nil {
		return rpc.As(err)
	}
	if err := modern.CheckProtocolVersion(meta.ProtocolVersion, []string{modern.ProtocolVersion}); err != nil {
		return modern.ErrUnsupportedProtocolVersion(meta.ProtocolVersion, c.f.opts.SupportedVersions)
	}
	if !c.f.serves(req.Method) && req.Method != modern.MethodSubscriptionsListen {
		return modern.ErrMethodNotFound(req.Method) // M-34, M-42, M-66
	}
	return nil
}

func (c *stdioConn) startListen(cl *call, id jsonrpc.ID, acked []string) {
	c.listens.Start(c.ctx, id, func(ctx context.Context) {
		send := func(m jsonrpc.Message) error { return c.Connection.Write(ctx, m) }
		_ = c.f.runListen(ctx, cl, id, acked, send, nil)
	})
}

func (c *stdioConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.signal()
	c.cancel()
	err := c.Connection.Close()
	c.listens.Wait()
	return err
}
