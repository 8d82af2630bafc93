package face

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	return f.mcp.Run(ctx, &stdioTransport{f: f, inner: t})
}

// ServeIO serves one client reading newline-delimited JSON-RPC from r and
// writing to w.
func (f *Face) ServeIO(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	return f.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}

type stdioTransport struct {
	f     *Face
	inner mcp.Transport
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &stdioConn{Connection: c, f: t.f, ctx: lctx, cancel: cancel, listens: map[string]context.CancelFunc{}}, nil
}

// stdioConn answers some requests before go-sdk reads them.
type stdioConn struct {
	mcp.Connection
	f      *Face
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	listens map[string]context.CancelFunc
	wg      sync.WaitGroup
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
		if !req.IsCall() {
			if req.Method == legacy.MethodCancelled && c.cancelListen(req.Params) {
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
		if p, ok := taskListen(req); ok {
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
		return msg, nil
	}
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
	ctx, cancel := context.WithCancel(c.ctx)
	key := idKey(id.Raw())
	c.mu.Lock()
	if old, ok := c.listens[key]; ok {
		old()
	}
	c.listens[key] = cancel
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		send := func(m jsonrpc.Message) error { return c.Connection.Write(ctx, m) }
		_ = c.f.runListen(ctx, cl, id, acked, send, nil)
		c.mu.Lock()
		delete(c.listens, key)
		c.mu.Unlock()
	}()
}

// cancelListen ends the listen a notifications/cancelled names (M-12 on
// stdio), reporting whether it named one.
func (c *stdioConn) cancelListen(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return false
	}
	var raw any
	if json.Unmarshal(p.RequestID, &raw) != nil {
		return false
	}
	if f, ok := raw.(float64); ok && f == float64(int64(f)) {
		raw = int64(f)
	}
	key := idKey(raw)
	c.mu.Lock()
	cancel, ok := c.listens[key]
	delete(c.listens, key)
	c.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

func (c *stdioConn) Close() error {
	c.cancel()
	err := c.Connection.Close()
	c.wg.Wait()
	return err
}

// idKey is a comparable key for a request id.
func idKey(raw any) string {
	b, _ := json.Marshal(raw)
	return string(bytes.TrimSpace(b))
}
