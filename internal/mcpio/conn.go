package mcpio

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Conn is the stdio connection of the module's servers (the legacy face,
// the modern face, the demo server): a go-sdk connection that answers some
// calls itself before go-sdk reads them (Gate), runs task listens on the
// connection (Listen, M-14), keeps a record per call handed to go-sdk
// (Accept) and, when asked to (HoldEnd), holds the end of the client's input
// back until every call read before it has been answered.
//
// Why the hold: go-sdk's jsonrpc2 connection treats a read error (io.EOF
// when a host pipes its requests and closes stdin) as the end of the
// connection: it cancels every call still queued or running and refuses to
// write their responses, so `printf 'initialize\n...\ntools/call\n' |
// bridge serve --stdio` got nothing back; on the legacy face the cancelled
// initialize never reached go-sdk (the bridge asks the upstream first) while
// the queued notifications/initialized did, and go-sdk logged "initialized
// before initialize". With the end held back go-sdk keeps its ordering:
// initialize is handled and answered before the next message is
// dispatched. Task listens are not held for: they have no response of their
// own and end when the connection closes.
type Conn struct {
	mcp.Connection
	h      ConnHooks
	ctx    context.Context
	cancel context.CancelFunc

	listens Listens

	mu      sync.Mutex
	calls   map[string]func()     // ids of calls handed to go-sdk, until answered → Accept's done (may be nil)
	out     map[string]jsonrpc.ID // server→client calls the client has not answered
	closed  bool
	changed chan struct{} // a call answered, a server→client call written, or Close (cap 1)

	readErr error // the input's end, once seen (Read is called by one goroutine only)
}

// ConnHooks are what each server adds to the shared connection. Every hook
// may be nil.
type ConnHooks struct {
	// SessionID is the connection's session id ("": the inner one's).
	SessionID string
	// HoldEnd holds the input's end back until every call read before it
	// is answered (see Conn).
	HoldEnd bool
	// Gate answers a call before go-sdk sees it: a non-nil error is written
	// as its response and go-sdk never reads the call.
	Gate func(req *jsonrpc.Request) *rpc.Error
	// Listen judges a subscriptions/listen for task ids (params p): an
	// error answers it; a run function runs the listen on the connection
	// until it ends (send writes one message); neither passes the call on
	// to go-sdk.
	Listen func(ctx context.Context, req *jsonrpc.Request, p modern.ListenParams) (run func(ctx context.Context, send func(jsonrpc.Message) error), rerr *rpc.Error)
	// Accept is told of each call handed to go-sdk (it may set req.Extra);
	// the function it returns (nil: none) runs once, when the call is
	// answered, its id reused, or the connection closed.
	Accept func(req *jsonrpc.Request) (done func())
}

// methodCancelled is the notification that ends a task listen (both eras
// spell it alike).
const methodCancelled = "notifications/cancelled"

// errInputClosed answers a server→client call (elicitation, sampling,
// roots) the client can no longer answer because it closed its input, so
// the handler waiting on it ends.
var errInputClosed = &rpc.Error{Code: rpc.CodeInternalError, Message: "client closed its input before answering"}

// NewConn wraps c with hooks h; ctx and cancel are the connection's life
// (WrapTransport's), the parent of its listens.
func NewConn(ctx context.Context, cancel context.CancelFunc, c mcp.Connection, h ConnHooks) *Conn {
	return &Conn{Connection: c, h: h, ctx: ctx, cancel: cancel,
		calls: map[string]func(){}, out: map[string]jsonrpc.ID{}, changed: make(chan struct{}, 1)}
}

// SessionID is the hooks' session id, or the inner connection's.
func (c *Conn) SessionID() string {
	if c.h.SessionID != "" {
		return c.h.SessionID
	}
	return c.Connection.SessionID()
}

func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.readErr != nil {
		return c.holdEnd(ctx)
	}
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			if !c.h.HoldEnd {
				return msg, err
			}
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
			delete(c.out, IDKey(resp.ID.Raw()))
			c.mu.Unlock()
			return msg, nil
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		if !req.IsCall() {
			if req.Method == methodCancelled && c.listens.Cancel(req.Params) {
				continue
			}
			return msg, nil
		}
		if c.h.Gate != nil {
			if rerr := c.h.Gate(req); rerr != nil {
				if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: rerr}); err != nil {
					return nil, err
				}
				continue
			}
		}
		if p, ok := TaskListen(req); ok && c.h.Listen != nil {
			run, rerr := c.h.Listen(ctx, req, p)
			if rerr != nil {
				if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: rerr}); err != nil {
					return nil, err
				}
				continue
			}
			if run != nil {
				c.listens.Start(c.ctx, req.ID, func(ctx context.Context) {
					run(ctx, func(m jsonrpc.Message) error { return c.Connection.Write(ctx, m) })
				})
				continue
			}
		}
		var done func()
		if c.h.Accept != nil {
			done = c.h.Accept(req)
		}
		k := IDKey(req.ID.Raw())
		c.mu.Lock()
		old, reused := c.calls[k]
		c.calls[k] = done
		c.mu.Unlock()
		if reused && old != nil {
			old() // a reused id: the old record is stale
		}
		return msg, nil
	}
}

// holdEnd returns the input's end once no call handed to go-sdk is still
// unanswered. Meanwhile a server→client call made while handling one gets an
// error response in the client's stead (it can never answer), so the handler
// that made it can finish.
func (c *Conn) holdEnd(ctx context.Context) (jsonrpc.Message, error) {
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
func (c *Conn) signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		// Recorded before the write: the answer may be read right after it.
		c.mu.Lock()
		c.out[IDKey(req.ID.Raw())] = req.ID
		c.mu.Unlock()
		defer c.signal()
	}
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		k := IDKey(resp.ID.Raw())
		c.mu.Lock()
		done, ok := c.calls[k]
		delete(c.calls, k)
		c.mu.Unlock()
		if ok && done != nil {
			done()
		}
		c.signal()
	}
	return err // unwrapped: go-sdk inspects transport errors
}

// Notify writes a notification directly on the connection (go-sdk has no
// API for the ones a server sends on its own).
func (c *Conn) Notify(method string, params json.RawMessage) error {
	return c.Connection.Write(context.Background(), &jsonrpc.Request{Method: method, Params: params})
}

func (c *Conn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.signal()
	c.cancel()
	err := c.Connection.Close() // unblocks a listen stuck in a write
	c.listens.Wait()
	c.mu.Lock()
	calls := c.calls
	c.calls = map[string]func(){}
	c.mu.Unlock()
	for _, done := range calls {
		if done != nil {
			done()
		}
	}
	c.signal()
	return err
}
