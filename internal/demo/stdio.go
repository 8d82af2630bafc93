package demo

import (
	"context"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Run serves one client over t (for example &mcp.StdioTransport{}) until
// the client disconnects or ctx ends. The connection is wrapped so that stdio
// gets what the HTTP front gives: modern-only era gating and task listens.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, mcpio.WrapTransport(t, func(lctx context.Context, cancel context.CancelFunc, c mcp.Connection) mcp.Connection {
		return &stdioConn{Connection: c, s: s, ctx: lctx, cancel: cancel}
	}))
}

// ServeIO serves one client reading newline-delimited JSON-RPC from r and
// writing to w (the stdio transport over any stream pair).
func (s *Server) ServeIO(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	return s.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}

// stdioConn answers some requests itself before go-sdk reads them: legacy
// requests on a modern-only server, and subscriptions/listen for task ids
// (whose notifications it writes on the same connection, correlated by
// subscriptionId, M-14). Everything else passes through unchanged.
type stdioConn struct {
	mcp.Connection
	s      *Server
	ctx    context.Context
	cancel context.CancelFunc

	listens mcpio.Listens
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		if req.IsCall() {
			if rerr := c.gate(req); rerr != nil {
				if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: rerr}); err != nil {
					return nil, err
				}
				continue
			}
			if rerr := c.s.removedMethod(req); rerr != nil {
				if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: rerr}); err != nil {
					return nil, err
				}
				continue
			}
			if p, ok := mcpio.TaskListen(req); ok {
				acked, rerr := c.s.checkListen("", p)
				if rerr != nil {
					if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: rerr}); err != nil {
						return nil, err
					}
					continue
				}
				if !c.s.opts.DisablePush {
					c.startListen(req.ID, acked)
					continue
				}
			}
		} else if req.Method == "notifications/cancelled" && c.listens.Cancel(req.Params) {
			continue
		}
		return msg, nil
	}
}

// gate refuses legacy traffic on a modern-only server: initialize with
// -32022 naming the supported versions (M-44), a call without the _meta
// protocolVersion with -32602 (M-37), a legacy _meta version with -32022.
// go-sdk would otherwise answer these with its session-initialization error
// (code 0).
func (c *stdioConn) gate(req *jsonrpc.Request) *rpc.Error {
	if c.s.opts.DualEra {
		return nil
	}
	if req.Method == "initialize" {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return c.s.legacyRefusal(p.ProtocolVersion)
	}
	mv := metaVersion(req.Params)
	switch {
	case mv == "":
		c.s.count(func(c *Counters) { c.LegacyRejected++ })
		return rpc.Errorf(rpc.CodeInvalidParams,
			"missing or invalid _meta field %q (this server speaks only MCP %s)", mcp.MetaKeyProtocolVersion, ProtocolVersion)
	case mv < ProtocolVersion:
		return c.s.legacyRefusal(mv)
	}
	return nil
}

func (c *stdioConn) startListen(id jsonrpc.ID, acked []string) {
	c.listens.Start(c.ctx, id, func(ctx context.Context) {
		send := func(m jsonrpc.Message) error { return c.Connection.Write(ctx, m) }
		_ = c.s.runListen(ctx, id, acked, send, nil)
	})
}

func (c *stdioConn) Close() error {
	c.cancel()
	err := c.Connection.Close() // unblocks a listen stuck in a write
	c.listens.Wait()
	return err
}
