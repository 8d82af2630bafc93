package demo

import (
	"context"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Run serves one client over t (for example &mcp.StdioTransport{}) until
// the client disconnects or ctx ends. The connection is wrapped so that stdio
// gets what the HTTP front gives: modern-only era gating and task listens.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, mcpio.WrapTransport(t, func(lctx context.Context, cancel context.CancelFunc, c mcp.Connection) mcp.Connection {
		return mcpio.NewConn(lctx, cancel, c, mcpio.ConnHooks{Gate: s.stdioGate, Listen: s.stdioListen})
	}))
}

// ServeIO serves one client reading newline-delimited JSON-RPC from r and
// writing to w (the stdio transport over any stream pair).
func (s *Server) ServeIO(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	return s.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}

// stdioGate answers, before go-sdk reads them, legacy requests on a
// modern-only server and the removed legacy task methods.
func (s *Server) stdioGate(req *jsonrpc.Request) *rpc.Error {
	if rerr := s.gate(req); rerr != nil {
		return rerr
	}
	return s.removedMethod(req)
}

// stdioListen takes subscriptions/listen for task ids (whose notifications
// it writes on the same connection, correlated by subscriptionId, M-14);
// with push disabled go-sdk answers it.
func (s *Server) stdioListen(_ context.Context, req *jsonrpc.Request, p modern.ListenParams) (func(context.Context, func(jsonrpc.Message) error), *rpc.Error) {
	acked, rerr := s.checkListen("", p)
	if rerr != nil || s.opts.DisablePush {
		return nil, rerr
	}
	return func(ctx context.Context, send func(jsonrpc.Message) error) {
		_ = s.runListen(ctx, req.ID, acked, send, nil)
	}, nil
}

// gate refuses legacy traffic on a modern-only server: initialize with
// -32022 naming the supported versions (M-44), a call without the _meta
// protocolVersion with -32602 (M-37), a legacy _meta version with -32022.
// go-sdk would otherwise answer these with its session-initialization error
// (code 0).
func (s *Server) gate(req *jsonrpc.Request) *rpc.Error {
	if s.opts.DualEra {
		return nil
	}
	if req.Method == "initialize" {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return s.legacyRefusal(p.ProtocolVersion)
	}
	mv := metaVersion(req.Params)
	switch {
	case mv == "":
		s.count(func(c *Counters) { c.LegacyRejected++ })
		return rpc.Errorf(rpc.CodeInvalidParams,
			"missing or invalid _meta field %q (this server speaks only MCP %s)", mcp.MetaKeyProtocolVersion, ProtocolVersion)
	case mv < ProtocolVersion:
		return s.legacyRefusal(mv)
	}
	return nil
}
