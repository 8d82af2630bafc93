package modernface

import (
	"context"
	"encoding/json"
	"io"

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
		return mcpio.NewConn(lctx, cancel, c, mcpio.ConnHooks{HoldEnd: true, Gate: f.stdioGate, Listen: f.stdioListen})
	}))
}

// ServeIO serves one client reading newline-delimited JSON-RPC from r and
// writing to w.
func (f *Face) ServeIO(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	return f.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}

// stdioGate applies the era and _meta rules of the HTTP front that need no
// headers: initialize → -32022 naming the versions (M-44); missing _meta →
// -32602 (M-37); unsupported version → -32022 (M-38); the removed
// tasks/result and tasks/list → -32601 (M-34, M-66).
func (f *Face) stdioGate(req *jsonrpc.Request) *rpc.Error {
	if req.Method == legacy.MethodInitialize {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return modern.ErrUnsupportedProtocolVersion(p.ProtocolVersion, f.opts.SupportedVersions)
	}
	meta, err := modern.DecodeRequestMeta(req.Params)
	if err == nil {
		err = meta.Validate()
	}
	if err != nil {
		return rpc.As(err)
	}
	if err := modern.CheckProtocolVersion(meta.ProtocolVersion, []string{modern.ProtocolVersion}); err != nil {
		return modern.ErrUnsupportedProtocolVersion(meta.ProtocolVersion, f.opts.SupportedVersions)
	}
	if !f.serves(req.Method) && req.Method != modern.MethodSubscriptionsListen {
		return modern.ErrMethodNotFound(req.Method) // M-34, M-42, M-66
	}
	return nil
}

// stdioListen takes a task listen on stdio (M-14): checked as over HTTP,
// its notifications written on the connection.
func (f *Face) stdioListen(ctx context.Context, req *jsonrpc.Request, p modern.ListenParams) (func(context.Context, func(jsonrpc.Message) error), *rpc.Error) {
	cl := &call{method: req.Method, params: req.Params}
	acked, rerr := f.checkListen(ctx, cl, p)
	if rerr != nil {
		return nil, rerr
	}
	return func(ctx context.Context, send func(jsonrpc.Message) error) {
		_ = f.runListen(ctx, cl, req.ID, acked, send, nil)
	}, nil
}
