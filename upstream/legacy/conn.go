package legacyup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/legacy"
)

// sdkTransport wraps the go-sdk transport of a session. Its connection keeps
// the raw InitializeResult (go-sdk's typed one has no capabilities.tasks) and,
// when mux is set, carries the bridge's own calls next to go-sdk's.
type sdkTransport struct {
	inner mcp.Transport
	s     *Session
	mux   bool
	conn  *muxConn
}

func (t *sdkTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &muxConn{Connection: c, s: t.s, mux: t.mux}
	return t.conn, nil
}

// muxConn is the go-sdk session's connection seen through the bridge.
type muxConn struct {
	mcp.Connection
	s   *Session
	mux bool

	mu      sync.Mutex
	initID  jsonrpc.ID
	hasInit bool
	initRaw json.RawMessage
}

func (c *muxConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.Method == legacy.MethodInitialize {
		c.mu.Lock()
		c.initID, c.hasInit = r.ID, true
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *muxConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			if c.mux && ctx.Err() == nil {
				c.s.fail(c.s.gone(fmt.Sprintf("the connection ended (%v)", err)))
			}
			return msg, err
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			c.mu.Lock()
			if c.hasInit && m.ID == c.initID && m.Error == nil {
				c.initRaw = append(json.RawMessage(nil), m.Result...)
			}
			c.mu.Unlock()
			if c.mux && c.s.deliver(m) {
				continue
			}
		case *jsonrpc.Request:
			if !c.mux {
				break
			}
			if m.IsCall() && isSideMethod(m.Method) {
				c.s.handleRequest(m, nil, nil)
				continue
			}
			if !m.IsCall() && (m.Method == legacy.MethodProgress || m.Method == legacy.MethodTaskStatus) {
				c.s.handleNotification(m.Method, m.Params, nil)
				continue
			}
		}
		return msg, nil
	}
}

func (c *muxConn) initializeResult() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.initRaw
}

// muxWire multiplexes the bridge's calls on a go-sdk connection (stdio) under
// string ids ("tb-N") that go-sdk's numeric ids never collide with.
type muxWire struct {
	conn *muxConn
}

func (w *muxWire) roundTrip(ctx context.Context, s *Session, c *call, req *jsonrpc.Request) (json.RawMessage, error) {
	if err := w.conn.Connection.Write(ctx, req); err != nil {
		if e := s.Err(); e != nil {
			return nil, e
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("legacy upstream %s: %s: %w", s.pool.cfg.Target, c.method, ctx.Err())
		}
		// A stdio write fails only when the process is gone.
		g := s.gone(fmt.Sprintf("writing to the upstream failed (%v)", err))
		s.fail(g)
		return nil, s.Err()
	}
	select {
	case resp := <-c.resp:
		return resultOf(resp)
	case <-s.ctx.Done():
		return nil, s.Err()
	case <-ctx.Done():
		// stdio cancellation (2025-11-25 basic/utilities/cancellation).
		params, _ := json.Marshal(map[string]any{"requestId": c.id, "reason": "the bridge's caller went away"})
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
		_ = w.conn.Connection.Write(nctx, &jsonrpc.Request{Method: legacy.MethodCancelled, Params: params})
		cancel()
		return nil, fmt.Errorf("legacy upstream %s: %s: %w", s.pool.cfg.Target, c.method, ctx.Err())
	}
}

func (w *muxWire) send(ctx context.Context, s *Session, msg jsonrpc.Message) error {
	if err := w.conn.Connection.Write(ctx, msg); err != nil {
		if e := s.Err(); e != nil {
			return e
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return newError(ErrUnavailable, err, "legacy upstream %s: send: %v", s.pool.cfg.Target, err)
	}
	return nil
}
