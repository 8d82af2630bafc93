package legacyface

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
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
	t := b.stdioTransport(s, &mcp.IOTransport{Reader: readCloser{r}, Writer: writeCloser{w}})
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

// stdioTransport gives go-sdk the shared stdio connection (mcpio.Conn, which
// holds the input's end until every call is answered) doing for stdio what
// the bridge's HTTP handler does for HTTP: a request record per incoming
// call (raw params), a session id, and a way to write notifications go-sdk
// has no API for.
func (b *Bridge) stdioTransport(s *session, inner mcp.Transport) mcp.Transport {
	return mcpio.WrapTransport(inner, func(ctx context.Context, cancel context.CancelFunc, c mcp.Connection) mcp.Connection {
		conn := mcpio.NewConn(ctx, cancel, c, mcpio.ConnHooks{SessionID: s.id, HoldEnd: true, Accept: b.stdioAccept})
		s.mu.Lock()
		s.notify = conn.Notify
		s.mu.Unlock()
		return conn
	})
}

// stdioAccept records a call handed to go-sdk as the HTTP handler does (a
// request record found by its nonce); the record is dropped once the call is
// answered.
func (b *Bridge) stdioAccept(m *jsonrpc.Request) func() {
	ri := newReqInfo(m.Method, m.Params, "")
	nonce := b.nonceSeed + "." + randomID()
	b.reqs.Store(nonce, ri)
	m.Extra = &mcp.RequestExtra{Header: http.Header{hdrNonce: []string{nonce}}}
	return func() {
		if v, ok := b.reqs.LoadAndDelete(nonce); ok {
			v.(*reqInfo).finish()
		}
	}
}
