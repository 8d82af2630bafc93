package legacyup

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/version"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/upcred"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// notifyTimeout bounds a best-effort notification (a cancellation).
const notifyTimeout = 5 * time.Second

// Config configures a Pool. Exactly one of Endpoint and NewTransport is set.
type Config struct {
	// Target names the upstream in errors and in sessionmap records (its URL or
	// command line). Never put credentials in it.
	Target string

	// Endpoint is the upstream's Streamable HTTP endpoint.
	Endpoint string
	// HTTPClient is used for Endpoint (nil: a private clone of
	// http.DefaultTransport).
	HTTPClient *http.Client
	// Header holds extra HTTP headers sent on every upstream request (the
	// bridge's own credentials towards the upstream, for example).
	Header http.Header
	// ForwardAuthorization sends the principal's own Authorization header
	// upstream on its session. The bridge turns it on for an HTTP upstream:
	// the upstream is the resource the token was issued for (the bridge's
	// public URL is its audience), which is the gateway pattern and not the
	// token passthrough to another API that the MCP security guidance
	// forbids. Off for an embedding that talks to a different server.
	ForwardAuthorization bool
	// Credentials, with ForwardAuthorization, gives every request of a
	// session its principal's freshest credential at send time rather than
	// the one the session was opened with (credentials.go). Nil: the
	// opening request's.
	Credentials *upcred.Keeper

	// NewTransport returns a fresh transport for a session of a stdio-like
	// upstream (e.g. &mcp.CommandTransport{Command: exec.Command(...)}); it is
	// called once per session, so each session is its own process.
	NewTransport func() mcp.Transport
	// Store, when set for an HTTP upstream, records each key's session (its
	// Mcp-Session-Id and InitializeResult) so that every bridge process
	// sharing the store uses the same upstream session per principal instead
	// of initializing its own (shared.go). Such sessions are never ended with
	// DELETE by one process: the others still use them.
	Store sessionmap.Store

	// PerKey gives every pool key its own session even with NewTransport (by
	// default a stdio upstream, which knows no principals, is one shared
	// session; HTTP upstreams always get one session per key).
	PerKey bool

	// ClientInfo is sent in initialize (default tasksbridge/<version>).
	ClientInfo *mcp.Implementation
	// Capabilities are declared in initialize. The default declares
	// elicitation (form and url), sampling and roots, so that the upstream may
	// ask whatever a client of the bridge can answer; no client "tasks"
	// capability is declared (the bridge hosts no client-side tasks).
	Capabilities *mcp.ClientCapabilities
	// InitTimeout bounds opening a session (default 30 s).
	InitTimeout time.Duration
	// Timeout bounds the upstream's silence on one call the bridge makes
	// (every request but a wait held for a task, CallOptions.Wait; every
	// message the upstream sends for the call starts the period again, and
	// it is held while the upstream waits for the bridge's answer to its own
	// request): past it the call is cancelled upstream and fails with a
	// retryable -32603 naming the upstream and --upstream-timeout, instead
	// of holding the client that is waiting for it. 0 selects
	// DefaultTimeout; negative: no bound.
	Timeout time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// OnNotification receives notifications that no call claims
	// (notifications/tasks/status, list changes, log messages). It must not
	// block.
	OnNotification func(s *Session, method string, params json.RawMessage)
}

// Pool holds one initialized upstream session per key (a principal, or "" for
// requests without credentials) and re-initializes a key's session after it
// died. It is safe for concurrent use.
type Pool struct {
	cfg Config
	hc  *http.Client

	mu     sync.Mutex
	slots  map[string]*slot
	byID   map[string]*Session
	closed bool
}

type slot struct {
	mu      sync.Mutex // held while a session for the key is being opened
	s       *Session
	touched time.Time // when the shared record was last refreshed
}

// NewPool checks cfg and returns an empty pool; sessions open on first use.
func NewPool(cfg Config) (*Pool, error) {
	if (cfg.Endpoint == "") == (cfg.NewTransport == nil) {
		return nil, errors.New("legacy upstream: exactly one of Endpoint and NewTransport must be set")
	}
	if cfg.Target == "" {
		cfg.Target = cfg.Endpoint
		if cfg.Target == "" {
			cfg.Target = "stdio upstream"
		}
	}
	if cfg.InitTimeout <= 0 {
		cfg.InitTimeout = 30 * time.Second
	}
	if cfg.ClientInfo == nil {
		cfg.ClientInfo = &mcp.Implementation{Name: "tasksbridge", Version: version.Version}
	}
	if cfg.Capabilities == nil {
		cfg.Capabilities = &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
			Sampling:    &mcp.SamplingCapabilities{},
			RootsV2:     &mcp.RootCapabilities{},
		}
	}
	p := &Pool{cfg: cfg, slots: map[string]*slot{}, byID: map[string]*Session{}}
	if cfg.Endpoint != "" {
		hc := &http.Client{}
		if cfg.HTTPClient != nil {
			*hc = *cfg.HTTPClient
		}
		if hc.Transport == nil {
			if dt, ok := http.DefaultTransport.(*http.Transport); ok {
				hc.Transport = dt.Clone()
			} else {
				hc.Transport = http.DefaultTransport
			}
		}
		p.hc = hc
	}
	return p, nil
}

// Target names the upstream.
func (p *Pool) Target() string { return p.cfg.Target }

// HTTP reports whether the upstream is a Streamable HTTP endpoint (whose
// sessions survive a bridge restart and can be resumed by id).
func (p *Pool) HTTP() bool { return p.cfg.Endpoint != "" }

func (p *Pool) logger() *slog.Logger {
	if p.cfg.Logger != nil {
		return p.cfg.Logger
	}
	return slog.Default()
}

func (p *Pool) keyOf(key string) string {
	if p.cfg.NewTransport != nil && !p.cfg.PerKey {
		return ""
	}
	return key
}

// Session returns key's live session, initializing one (with authorization
// as the principal's credential when Config.ForwardAuthorization is set) if
// the key has none or its session died.
func (p *Pool) Session(ctx context.Context, key, authorization string) (*Session, error) {
	p.observe(ctx, key, authorization)
	key = p.keyOf(key)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, newError(ErrSessionGone, nil, "legacy upstream %s: the bridge is shutting down", p.cfg.Target)
	}
	sl := p.slots[key]
	if sl == nil {
		sl = &slot{}
		p.slots[key] = sl
	}
	p.mu.Unlock()

	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.s != nil && sl.s.Alive() {
		if sl.s.shared.Load() && time.Since(sl.touched) > sharedTouchEvery {
			p.touchShared(ctx, key)
			sl.touched = time.Now()
		}
		return sl.s, nil
	}
	var s *Session
	var err error
	if p.sharing() {
		s, err = p.sharedSession(ctx, key, authorization)
		sl.touched = time.Now()
	} else {
		s, err = p.open(ctx, key, authorization)
	}
	if err != nil {
		return nil, err
	}
	sl.s = s
	return s, nil
}

// Current returns key's live session without opening one (nil if none).
func (p *Pool) Current(key string) *Session {
	key = p.keyOf(key)
	p.mu.Lock()
	sl := p.slots[key]
	p.mu.Unlock()
	if sl == nil {
		return nil
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.s != nil && sl.s.Alive() {
		return sl.s
	}
	return nil
}

// Lookup returns the session with upstream session id, if this process knows
// it (live or dead).
func (p *Pool) Lookup(id string) *Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byID[id]
}

// Resume returns a handle on the HTTP upstream session id that this process
// did not open (it was recorded before a restart): calls carry its
// Mcp-Session-Id directly, and the first 404 ends it. It returns nil for a
// stdio upstream, whose sessions end with the bridge's process.
func (p *Pool) Resume(key, id, authorization string) *Session {
	p.observe(context.Background(), key, authorization)
	if p.cfg.Endpoint == "" || id == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.byID[id]; s != nil {
		return s
	}
	s := newSession(p, p.keyOf(key))
	s.id = id
	s.wire = &httpWire{endpoint: p.cfg.Endpoint, hc: p.clientFor(key, authorization)}
	p.byID[id] = s
	return s
}

// forget is called when s dies: the key gets a new session on next use; the
// dead one stays findable by id so its tasks can say why they failed.
func (p *Pool) forget(s *Session) {}

// Close ends every session (DELETE on HTTP, process exit on stdio).
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	var all []*Session
	seen := map[*Session]bool{}
	for _, sl := range p.slots {
		if sl.s != nil && !seen[sl.s] {
			all = append(all, sl.s)
			seen[sl.s] = true
		}
	}
	for _, s := range p.byID {
		if !seen[s] {
			all = append(all, s)
			seen[s] = true
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, s := range all {
		if err := s.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// clientFor returns the HTTP client of a session: the pool's, with the
// configured headers and (when forwarded) the principal's Authorization.
func (p *Pool) clientFor(key, authorization string) *http.Client {
	h := p.cfg.Header.Clone()
	if p.cfg.ForwardAuthorization && p.cfg.Credentials != nil && key != "" {
		c := *p.hc
		c.Transport = p.freshAuth(p.hc.Transport, key, authorization)
		if len(h) > 0 {
			c.Transport = headerRT{next: c.Transport, h: h}
		}
		return &c
	}
	if p.cfg.ForwardAuthorization && authorization != "" {
		if h == nil {
			h = http.Header{}
		}
		h.Set("Authorization", authorization)
	}
	if len(h) == 0 {
		return p.hc
	}
	c := *p.hc
	c.Transport = headerRT{next: p.hc.Transport, h: h}
	return &c
}

// headerRT adds fixed headers to every request.
type headerRT struct {
	next http.RoundTripper
	h    http.Header
}

func (t headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = append([]string(nil), v...)
	}
	return t.next.RoundTrip(r)
}

// versionRT stamps MCP-Protocol-Version on go-sdk's own requests after
// initialize (the connection wrapper hides go-sdk's hook that would set it).
// It also keeps go-sdk from ending a shared session with DELETE when this
// process closes it: other processes still use it.
type versionRT struct {
	next http.RoundTripper
	s    *Session
}

func (t versionRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete && t.s != nil && t.s.shared.Load() {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return &http.Response{StatusCode: http.StatusNoContent, Status: "204 No Content", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	if r.Header.Get(headerProtocolVersion) == "" && r.Header.Get(headerSessionID) != "" {
		r = r.Clone(r.Context())
		r.Header.Set(headerProtocolVersion, ProtocolVersion)
	}
	return t.next.RoundTrip(r)
}

// open initializes a new session for key with go-sdk's client pinned to
// 2025-11-25.
func (p *Pool) open(ctx context.Context, key, authorization string) (*Session, error) {
	s := newSession(p, key)
	client := mcp.NewClient(p.cfg.ClientInfo, &mcp.ClientOptions{
		Capabilities: p.cfg.Capabilities,
		Logger:       p.cfg.Logger,
	})
	st := &sdkTransport{s: s}
	var refused *authCatch
	if p.cfg.Endpoint != "" {
		hc := p.clientFor(key, authorization)
		sdkHC := *hc
		refused = &authCatch{next: hc.Transport}
		sdkHC.Transport = versionRT{next: refused, s: s}
		st.inner = &mcp.StreamableClientTransport{
			Endpoint:             p.cfg.Endpoint,
			HTTPClient:           &sdkHC,
			DisableStandaloneSSE: true, // the bridge polls; no GET stream to keep open per principal
			MaxRetries:           -1,
		}
		s.wire = &httpWire{endpoint: p.cfg.Endpoint, hc: hc}
	} else {
		st.inner = p.cfg.NewTransport()
		st.mux = true
	}
	// A fresh context: the caller's may carry values go-sdk reads (a
	// 2026-07-28 server request's protocol version would otherwise become
	// this initialize's MCP-Protocol-Version header).
	ictx, cancel := context.WithTimeout(context.Background(), p.cfg.InitTimeout)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	cs, err := client.Connect(ictx, st, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		s.cancel()
		if ae := refused.refusal(); ae != nil {
			return nil, unauthorized(p.cfg.Target, ae)
		}
		if we := upstreamAnswer(err); we != nil {
			return nil, &Error{RPC: rpc.Errorf(rpc.CodeInternalError, "legacy upstream %s refused initialize: %s", p.cfg.Target, we.Message), Kind: ErrBadResponse, Cause: err}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("legacy upstream %s: initialize: %w", p.cfg.Target, ctx.Err())
		}
		return nil, newError(ErrUnavailable, err, "legacy upstream %s: initialize failed: %v", p.cfg.Target, err)
	}
	s.cs = cs
	if st.mux {
		s.wire = &muxWire{conn: st.conn}
		s.id = "stdio-" + rand.Text()[:12]
	} else {
		s.id = cs.ID()
	}
	init := st.conn.initializeResult()
	if len(init) == 0 {
		if b, err := json.Marshal(cs.InitializeResult()); err == nil {
			init = b
		}
	}
	s.setInitializeResult(init)
	if st.mux {
		go func() {
			err := cs.Wait()
			reason := "the upstream process exited"
			if err != nil {
				reason = fmt.Sprintf("the upstream connection ended (%v)", err)
			}
			s.fail(s.gone(reason))
		}()
	}
	p.mu.Lock()
	if s.id != "" {
		p.byID[s.id] = s
	}
	p.mu.Unlock()
	p.logger().Debug("legacy upstream: session opened", "upstream", p.cfg.Target)
	return s, nil
}

// upstreamAnswer returns the JSON-RPC error the upstream itself sent, if err
// carries one; go-sdk's own transport errors (rejected by transport, closing)
// are JSON-RPC-shaped too and do not count.
func upstreamAnswer(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return nil
	}
	switch we.Code {
	case -32005, -32004, -32003: // jsonrpc2 ErrRejected, ErrServerClosing, ErrClientClosing
		return nil
	}
	return we
}
