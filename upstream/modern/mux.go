package modernup

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mux multiplexes calls over one mcp.Connection: a reader goroutine hands each
// response to the waiter registered under its id and each notification to the
// call or subscription it belongs to.
//
// Routing of notifications, in order:
//  1. _meta["io.modelcontextprotocol/subscriptionId"] → the subscriptions/listen
//     call with that id (M-14);
//  2. notifications/progress → the call that owns the progress token (tokens
//     are rewritten per call so two callers' tokens never collide);
//  3. notifications/cancelled for one of our calls → that call ends (the server
//     tore a listen stream down, M-47);
//  4. anything else → fallback.
type mux struct {
	conn     mcp.Connection
	stdio    bool                   // cancellation by notifications/cancelled; server requests get -32601
	fallback func(*jsonrpc.Request) // unclaimed notifications (may be nil)

	mu     sync.Mutex
	calls  map[jsonrpc.ID]*pending
	tokens map[string]*pending // progress token (JSON text) → call
	err    error               // why the reader stopped; set once
	done   chan struct{}       // closed when the reader stops
}

// pending is one in-flight call.
type pending struct {
	id     jsonrpc.ID
	resp   chan *jsonrpc.Response // cap 1
	notify func(*jsonrpc.Request) // notifications for this call (may be nil)
	token  string                 // our progress token ("" when none)
	orig   json.RawMessage        // the caller's progress token, restored on delivery
}

func newMux(conn mcp.Connection, stdio bool, fallback func(*jsonrpc.Request)) *mux {
	m := &mux{
		conn:     conn,
		stdio:    stdio,
		fallback: fallback,
		calls:    map[jsonrpc.ID]*pending{},
		tokens:   map[string]*pending{},
		done:     make(chan struct{}),
	}
	go m.read()
	return m
}

// errMuxClosed is the reader's error after close() was called by us.
var errMuxClosed = errors.New("connection closed")

func (m *mux) read() {
	for {
		msg, err := m.conn.Read(context.Background())
		if err != nil {
			m.stop(err)
			return
		}
		switch msg := msg.(type) {
		case *jsonrpc.Response:
			m.mu.Lock()
			p := m.calls[msg.ID]
			delete(m.calls, msg.ID)
			if p != nil && p.token != "" {
				delete(m.tokens, p.token)
			}
			m.mu.Unlock()
			if p != nil {
				p.resp <- msg // cap 1, sent once: never blocks
			}
			// else: a late answer to a call we gave up on (M-12: ignore it).
		case *jsonrpc.Request:
			if msg.IsCall() {
				m.refuse(msg)
				continue
			}
			m.route(msg)
		}
	}
}

// refuse answers a server→client request: 2026-07-28 servers send none (MRTR
// replaced them). Only stdio can carry a reply; on HTTP a client MUST
// NOT POST responses (M-09), so the request is dropped.
func (m *mux) refuse(req *jsonrpc.Request) {
	if !m.stdio {
		return
	}
	resp := &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
		Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + req.Method + " (2026-07-28 servers send no requests)",
	}}
	go func() { _ = m.conn.Write(context.Background(), resp) }()
}

func (m *mux) route(n *jsonrpc.Request) {
	var p struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		ProgressToken json.RawMessage            `json:"progressToken"`
		RequestID     json.RawMessage            `json:"requestId"`
	}
	_ = json.Unmarshal(n.Params, &p)

	if raw, ok := p.Meta[metaSubscriptionID]; ok {
		if id, ok := idFromJSON(raw); ok {
			m.mu.Lock()
			c := m.calls[id]
			m.mu.Unlock()
			if c != nil && c.notify != nil {
				c.notify(n)
				return
			}
		}
	}
	switch n.Method {
	case "notifications/progress":
		if len(p.ProgressToken) > 0 {
			m.mu.Lock()
			c := m.tokens[string(p.ProgressToken)]
			m.mu.Unlock()
			if c != nil {
				if c.notify != nil {
					c.notify(restoreToken(n, c.orig))
				}
				return
			}
		}
	case "notifications/cancelled":
		if id, ok := idFromJSON(p.RequestID); ok {
			m.mu.Lock()
			c := m.calls[id]
			delete(m.calls, id)
			m.mu.Unlock()
			if c != nil {
				c.resp <- &jsonrpc.Response{ID: id, Error: errCancelledByServer}
				return
			}
		}
	}
	if m.fallback != nil {
		m.fallback(n)
	}
}

// errCancelledByServer ends a call whose request the server cancelled.
var errCancelledByServer = errors.New("the upstream cancelled the request")

// restoreToken puts the caller's own progress token back into a progress
// notification before it is delivered.
func restoreToken(n *jsonrpc.Request, orig json.RawMessage) *jsonrpc.Request {
	var params map[string]json.RawMessage
	if json.Unmarshal(n.Params, &params) != nil || params == nil {
		return n
	}
	params["progressToken"] = orig
	b, err := json.Marshal(params)
	if err != nil {
		return n
	}
	return &jsonrpc.Request{Method: n.Method, Params: b}
}

func idFromJSON(raw json.RawMessage) (jsonrpc.ID, bool) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil && id.IsValid()
}

// stop records why the mux ended and wakes every waiter. The first reason wins.
func (m *mux) stop(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return
	}
	m.err = err
	close(m.done)
}

// alive reports whether the reader still runs.
func (m *mux) alive() bool {
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

// close ends the connection (the reader then stops).
func (m *mux) close() {
	m.stop(errMuxClosed)
	_ = m.conn.Close()
}

// register adds a waiter for req. It fails when the mux has stopped.
func (m *mux) register(p *pending) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.calls[p.id] = p
	if p.token != "" {
		m.tokens[p.token] = p
	}
	return nil
}

func (m *mux) unregister(p *pending) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls[p.id] == p {
		delete(m.calls, p.id)
	}
	if p.token != "" && m.tokens[p.token] == p {
		delete(m.tokens, p.token)
	}
}

// call sends req and waits for its response. A ctx that ends first abandons
// the call: on stdio the server is told with notifications/cancelled; on HTTP
// the POST's context is ctx itself, so its stream is already closed (M-12).
// A nil response with a nil error never happens.
func (m *mux) call(ctx context.Context, req *jsonrpc.Request, p *pending) (*jsonrpc.Response, error) {
	if err := m.register(p); err != nil {
		return nil, err
	}
	if err := m.conn.Write(ctx, req); err != nil {
		m.unregister(p)
		return nil, writeError{err}
	}
	select {
	case resp := <-p.resp:
		return resp, nil
	case <-ctx.Done():
		m.unregister(p)
		select {
		case resp := <-p.resp: // answered in the same instant: keep it
			return resp, nil
		default:
		}
		if m.stdio {
			m.notifyCancelled(req.ID, ctx.Err())
		}
		return nil, ctx.Err()
	case <-m.done:
		m.unregister(p)
		select {
		case resp := <-p.resp:
			return resp, nil
		default:
		}
		return nil, m.err
	}
}

func (m *mux) notifyCancelled(id jsonrpc.ID, cause error) {
	params, err := json.Marshal(map[string]any{"requestId": id.Raw(), "reason": cause.Error()})
	if err != nil {
		return
	}
	// Best effort, bounded by the connection: a dead stdio pipe fails at once.
	_ = m.conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
}

// writeError marks an error returned by Connection.Write (the request may not
// have reached the server), as opposed to one read from the connection.
type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }
func (e writeError) Unwrap() error { return e.err }
