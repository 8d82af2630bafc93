package modernup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/internal/version"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Client talks to one modern upstream. Like httputil.ReverseProxy it is a
// struct with a few hooks: NewHTTP and NewCommand fill them for the two
// transports, and tests may set Dial to anything that yields an
// mcp.Connection. A Client is safe for concurrent use; its fields must not be
// changed after the first call.
type Client struct {
	// Target names the upstream in error messages ("http://host/mcp" or
	// "command prog args"). Never put credentials in it.
	Target string

	// Dial opens a connection to the upstream.
	Dial func(ctx context.Context) (mcp.Connection, error)

	// Shared selects one long-lived connection for every call (stdio: one
	// process; re-dialled after it dies). When false every call gets its own
	// connection (Streamable HTTP: each request is its own POST, so every
	// notification read on that connection belongs to that call).
	Shared bool

	// ClientInfo is the default io.modelcontextprotocol/clientInfo (M-02).
	ClientInfo modern.Implementation

	// OnNotification receives notifications no call or subscription claims
	// (on stdio: log messages, which carry no request id). It must not block.
	OnNotification func(method string, params json.RawMessage)

	// AckTimeout bounds the wait for a subscription's acknowledgement
	// (default DefaultAckTimeout).
	AckTimeout time.Duration

	// Timeout bounds the upstream's silence on one call (every request but
	// subscriptions/listen): a call that gets neither its answer nor a
	// notification of its own (progress, log) for this long fails with a
	// retryable -32603 naming the upstream's slowness (ErrUnavailable)
	// instead of holding its caller. 0 selects DefaultTimeout; negative:
	// no bound.
	Timeout time.Duration

	ids atomic.Int64

	mu     sync.Mutex
	shared *mux

	idle func() // closes idle HTTP connections (NewHTTP)
}

// CallOptions are the per-request settings the caller (the legacy face)
// stamps on one upstream request.
type CallOptions struct {
	// Capabilities are the caller's own client capabilities (the legacy
	// client's elicitation / sampling / roots, M-01); the tasks
	// extension is always added (M-20) and a legacy top-level "tasks" key is
	// dropped (M-66).
	Capabilities modern.ClientCapabilities
	// ClientInfo overrides Client.ClientInfo.
	ClientInfo *modern.Implementation
	// LogLevel opts the request into notifications/message (M-46); "" = none.
	LogLevel modern.LoggingLevel
	// Authorization is sent as the HTTP Authorization header (the legacy
	// client's own credentials, so the upstream binds tasks to its principal).
	Authorization string
	// Header holds extra HTTP headers (e.g. Mcp-Param-*, M-11); values are
	// base64-wrapped when needed. Headers that mirror the body cannot be set.
	Header http.Header
	// OnNotify receives the notifications that belong to this request
	// (notifications/progress with the caller's own token restored, and on
	// HTTP notifications/message). It must not block.
	OnNotify func(method string, params json.RawMessage)
	// Stamped says params already carry the complete per-request _meta for
	// this call (translate.RequestToModern stamped it from the same
	// session's capabilities and clientInfo): the Client then sends them as
	// they are, rewriting only a progress token (M-01, M-02, M-20 hold by the
	// caller's stamp). Stamping twice was a sixth of the bridge's CPU per call.
	Stamped bool
}

// NewHTTP returns a Client for a Streamable HTTP endpoint. hc may be nil (a
// private clone of http.DefaultTransport). The Client adds the Mcp-Name header for
// tasks/* and the per-call headers through its own RoundTripper (M-10, M-32).
func NewHTTP(endpoint string, hc *http.Client) *Client {
	wrapped := &http.Client{}
	if hc != nil {
		*wrapped = *hc
	}
	next := wrapped.Transport
	if next == nil {
		// Its own pool, so Close can drop idle connections without touching
		// other users of http.DefaultTransport.
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			next = dt.Clone()
		}
	}
	wrapped.Transport = headerRoundTripper{next: next}
	c := &Client{Target: endpoint, ClientInfo: defaultClientInfo(), idle: wrapped.CloseIdleConnections}
	// One POST per call on a stateless upstream: the Client's own small
	// exchange (httpconn.go) rather than go-sdk's streamable client
	// connection, whose per-message cost dominated the bridge's CPU per call.
	c.Dial = func(ctx context.Context) (mcp.Connection, error) {
		return newHTTPConn(endpoint, wrapped), nil
	}
	return c
}

// NewCommand returns a Client for a stdio upstream. newCmd must return a fresh,
// unstarted *exec.Cmd on every call (a process is started per connection, and
// again after it exits). target names it in errors.
func NewCommand(target string, newCmd func() *exec.Cmd) *Client {
	c := &Client{Target: target, Shared: true, ClientInfo: defaultClientInfo()}
	c.Dial = func(ctx context.Context) (mcp.Connection, error) {
		return (&mcp.CommandTransport{Command: newCmd()}).Connect(ctx)
	}
	return c
}

func defaultClientInfo() modern.Implementation {
	return modern.Implementation{Name: "tasksbridge", Version: version.Version}
}

// Close ends the shared connection (stdio: the process) and closes idle HTTP
// connections. Calls in flight on a shared connection fail with
// ErrUnavailable; a later call dials again.
func (c *Client) Close() error {
	c.mu.Lock()
	m := c.shared
	c.shared = nil
	c.mu.Unlock()
	if m != nil {
		m.close()
	}
	if c.idle != nil {
		c.idle()
	}
	return nil
}

// Call sends one request and returns its raw result. params is the method's
// params object (nil for none); its _meta is stamped with the per-request
// fields (M-01, M-02, M-20). The result's resultType is checked against the
// method (M-04, M-22): an invalid one is ErrBadResponse.
//
// Errors: a JSON-RPC error from the upstream comes back unchanged as
// *rpc.Error; a transport failure is an *Error (-32603 naming the upstream)
// matching ErrUnavailable or ErrBadResponse; cancelling ctx abandons the call
// (M-12) and the error matches ctx.Err().
func (c *Client) Call(ctx context.Context, method string, params json.RawMessage, opts CallOptions) (json.RawMessage, error) {
	res, err := c.call(ctx, method, params, &opts)
	if err != nil {
		return nil, err
	}
	if _, err := modern.ClassifyResultFor(method, res, true); err != nil {
		return nil, c.badResponse(method, rpc.As(err).Message, nil)
	}
	return res, nil
}

// DefaultTimeout is Client.Timeout's default: five minutes of silence.
// A modern upstream answers a task-creating tools/call (and tasks/get,
// tasks/update, tasks/cancel, server/discover) at once; only a tool it
// runs synchronously may take a while, and long work is what tasks are for.
// Five minutes is well beyond what common clients wait for one request
// without progress (the TypeScript SDK gives up after 60 s), so the bound
// never cuts a call a client is still waiting for; every progress
// notification the upstream sends for the call starts the period again.
const DefaultTimeout = 5 * time.Minute

// errSilent is the cause of a call cut by Client.Timeout.
var errSilent = errors.New("upstream: no answer within the timeout")

// timeout is the effective Client.Timeout (0: none).
func (c *Client) timeout() time.Duration {
	switch {
	case c.Timeout == 0:
		return DefaultTimeout
	case c.Timeout < 0:
		return 0
	}
	return c.Timeout
}

// bound returns ctx ended after the upstream's silence of Client.Timeout:
// opts is changed so that each of the call's own notifications starts the
// period again. stop releases the timer.
func (c *Client) bound(ctx context.Context, opts *CallOptions) (context.Context, func()) {
	d := c.timeout()
	if d <= 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(d, func() { cancel(errSilent) })
	if n := opts.OnNotify; n != nil {
		opts.OnNotify = func(method string, params json.RawMessage) {
			t.Reset(d)
			n(method, params)
		}
	}
	return ctx, func() {
		t.Stop()
		cancel(nil)
	}
}

// silent is the error of a call cut by Client.Timeout: retryable, in words
// that say what happened and what to do.
func (c *Client) silent(method string) error {
	return &Error{
		RPC: rpc.Errorf(rpc.CodeInternalError, "upstream %s did not answer %s within %s (the bridge's --upstream-timeout): it is overloaded or stalled; try again later",
			c.Target, method, c.timeout()),
		Kind:  ErrUnavailable,
		Cause: context.DeadlineExceeded,
	}
}

// call is Call without the result check.
func (c *Client) call(ctx context.Context, method string, params json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
	o := *opts
	opts = &o
	parent := ctx
	ctx, stop := c.bound(ctx, opts)
	defer stop()
	res, err := c.callOnce(ctx, method, params, opts)
	if err != nil && parent.Err() == nil && errors.Is(context.Cause(ctx), errSilent) {
		return nil, c.silent(method)
	}
	return res, err
}

// callOnce sends the call (re-issued once when its stream was lost).
func (c *Client) callOnce(ctx context.Context, method string, params json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
	for attempt := 0; ; attempt++ {
		req, p, err := c.newRequest(method, params, opts)
		if err != nil {
			return nil, err
		}
		resp, err := c.roundTrip(ctx, req, p, opts)
		if err != nil {
			return nil, c.classify(ctx, method, err)
		}
		if resp.Error == nil {
			return resp.Result, nil
		}
		var we *jsonrpc.Error
		if errors.As(resp.Error, &we) {
			return nil, we
		}
		// A stream that ended without an answer (go-sdk synthesises a
		// non-wire error): the request is lost and MUST be re-issued with a new
		// id (M-13). Only methods without side effects are re-issued here;
		// tools/call is left to the caller.
		if attempt == 0 && reissuable(method) && ctx.Err() == nil {
			continue
		}
		return nil, c.unavailable(method, resp.Error)
	}
}

func reissuable(method string) bool {
	return method != modern.MethodToolsCall && method != modern.MethodSubscriptionsListen
}

// newRequest builds the JSON-RPC request with a fresh id (M-03) and the
// stamped _meta, plus its waiter.
func (c *Client) newRequest(method string, params json.RawMessage, opts *CallOptions) (*jsonrpc.Request, *pending, error) {
	n := c.ids.Add(1)
	id, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		return nil, nil, fmt.Errorf("upstream: make id: %w", err)
	}
	p := &pending{id: id, resp: make(chan *jsonrpc.Response, 1)}
	var meta modern.RequestMeta
	if !opts.Stamped {
		meta = c.requestMeta(opts)
	}
	rewrite := false
	if opts.OnNotify != nil {
		notify := opts.OnNotify
		p.notify = func(r *jsonrpc.Request) { notify(r.Method, r.Params) }
		// Rewrite the caller's progress token to one unique on this
		// connection, so progress of two callers never crosses.
		// The substring test skips decoding _meta for the common call
		// without a progress token (an escaped key spelling is decoded).
		if bytes.Contains(params, []byte(modern.MetaKeyProgressToken)) || bytes.Contains(params, []byte(`\u`)) {
			if orig, err := modern.DecodeRequestMeta(params); err == nil && orig.ProgressToken != nil {
				p.orig = orig.ProgressToken
				p.token = strconv.Quote("tb-progress-" + strconv.FormatInt(n, 10))
				meta.ProgressToken = json.RawMessage(p.token)
				rewrite = true
			}
		}
	}
	if opts.Stamped && !rewrite {
		return &jsonrpc.Request{ID: id, Method: method, Params: params}, p, nil
	}
	stamped, err := modern.StampRequestMeta(params, meta)
	if err != nil {
		return nil, nil, err
	}
	return &jsonrpc.Request{ID: id, Method: method, Params: stamped}, p, nil
}

// requestMeta is the per-request _meta of one call (M-01, M-02).
func (c *Client) requestMeta(opts *CallOptions) modern.RequestMeta {
	caps := opts.Capabilities
	caps.Extensions = cloneExtensions(caps.Extensions)
	caps.AddExtension(modern.TasksExtensionID, modern.Object{})
	if _, ok := caps.Extra["tasks"]; ok { // legacy capability: meaningless upstream (M-66)
		extra := make(map[string]json.RawMessage, len(caps.Extra))
		for k, v := range caps.Extra {
			if k != "tasks" {
				extra[k] = v
			}
		}
		caps.Extra = extra
	}
	info := c.ClientInfo
	if opts.ClientInfo != nil {
		info = *opts.ClientInfo
	}
	if info.Name == "" || info.Version == "" {
		info = defaultClientInfo()
	}
	m := modern.NewRequestMeta(caps, &info)
	m.LogLevel = opts.LogLevel
	return m
}

func cloneExtensions(in map[string]modern.Object) map[string]modern.Object {
	out := make(map[string]modern.Object, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	return out
}

// roundTrip sends req on the right connection and waits for its response.
func (c *Client) roundTrip(ctx context.Context, req *jsonrpc.Request, p *pending, opts *CallOptions) (*jsonrpc.Response, error) {
	ctx = withCallHeaders(ctx, opts)
	if c.Shared {
		m, err := c.sharedMux(ctx)
		if err != nil {
			return nil, err
		}
		return m.call(ctx, req, p)
	}
	conn, err := c.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	m := newMux(conn, false, p.notify)
	defer m.close()
	return m.call(ctx, req, p)
}

// sharedMux returns the live shared connection, dialling a new one when there
// is none or the last one died (M-14: subscriptions re-listen on their own).
func (c *Client) sharedMux(ctx context.Context) (*mux, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shared != nil && c.shared.alive() {
		return c.shared, nil
	}
	if c.shared != nil {
		c.shared.close()
		c.shared = nil
	}
	conn, err := c.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	var fallback func(*jsonrpc.Request)
	if h := c.OnNotification; h != nil {
		fallback = func(r *jsonrpc.Request) { h(r.Method, r.Params) }
	}
	c.shared = newMux(conn, true, fallback)
	return c.shared, nil
}

// ErrUnavailable matches errors for which the upstream could not be reached
// or did not answer: connection refused, 5xx, 429, timeouts, a broken stream,
// an exited stdio process. Retrying later may succeed.
var ErrUnavailable = errors.New("upstream unavailable")

// ErrBadResponse matches errors for answers that are not valid MCP 2026-07-28
// (an HTTP error without a JSON-RPC body, an invalid resultType, a malformed
// result). Retrying will not help; the upstream may not be a modern server.
var ErrBadResponse = errors.New("upstream sent an invalid response")

// Error is a failure on the way to or from the upstream (not a JSON-RPC error
// the upstream sent: those are returned as *rpc.Error unchanged). It unwraps
// to its -32603 *rpc.Error (so rpc.As / rpc.CodeOf give the face its answer),
// to ErrUnavailable or ErrBadResponse, and to the cause.
type Error struct {
	RPC   *rpc.Error
	Kind  error
	Cause error
}

func (e *Error) Error() string   { return e.RPC.Message }
func (e *Error) Unwrap() []error { return []error{e.RPC, e.Kind, e.Cause} }

// Temporary reports whether retrying later may succeed (ErrUnavailable). It
// lets packages that do not import this one (runtime/watch) classify errors.
func (e *Error) Temporary() bool { return e.Kind == ErrUnavailable }

// Retryable reports whether err is worth retrying later (ErrUnavailable).
func Retryable(err error) bool { return errors.Is(err, ErrUnavailable) }

func (c *Client) unavailable(method string, cause error) error {
	return &Error{
		RPC:   rpc.Errorf(rpc.CodeInternalError, "upstream %s unreachable (%s): %s", c.Target, method, causeText(cause)),
		Kind:  ErrUnavailable,
		Cause: cause,
	}
}

func (c *Client) badResponse(method, what string, cause error) error {
	return &Error{
		RPC:   rpc.Errorf(rpc.CodeInternalError, "upstream %s sent an invalid response to %s: %s", c.Target, method, what),
		Kind:  ErrBadResponse,
		Cause: cause,
	}
}

// classify turns an error of the transport layer into the Client's error
// vocabulary (see Call).
func (c *Client) classify(ctx context.Context, method string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && (errors.Is(err, ctxErr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		what := "cancelled"
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			what = "timed out"
		}
		kind := error(ErrUnavailable)
		if errors.Is(ctxErr, context.Canceled) {
			kind = context.Canceled // the caller gave up: nothing to retry
		}
		return &Error{
			RPC:   rpc.Errorf(rpc.CodeInternalError, "upstream %s: %s %s", c.Target, method, what),
			Kind:  kind,
			Cause: ctxErr,
		}
	}
	if ae, ok := oauthmeta.AsUpstreamAuthError(err); ok {
		return c.unauthorized(method, ae)
	}
	var ae *answerError
	var se *statusError
	switch {
	case errors.As(err, &ae):
		return ae.rpc // HTTP 4xx with a JSON-RPC body: the upstream's own answer
	case errors.As(err, &se):
		if se.code >= 500 || se.code == http.StatusTooManyRequests {
			return c.unavailable(method, se)
		}
		return c.badResponse(method, se.Error()+" (not a JSON-RPC answer)", se)
	}
	// Anything else (connection refused, reset, a broken stream, a dead
	// stdio process) never reached an answer. go-sdk's own sentinel
	// *jsonrpc.Error values in err's chain are not upstream answers.
	return c.unavailable(method, err)
}

// causeText is a short description of a transport error: the innermost
// url.Error cause when there is one (go-sdk's own wrapping repeats the
// request summary).
func causeText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		var se *statusError
		if errors.As(ue.Err, &se) {
			return se.Error()
		}
		return ue.Err.Error()
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.Error()
	}
	s := err.Error()
	return strings.TrimPrefix(s, "sending ")
}
