// Package modernface serves modern clients (MCP 2026-07-28 with the
// io.modelcontextprotocol/tasks extension) in front of a legacy upstream
// (2025-11-25 with experimental tasks): every request is answered with the
// upstream work done on a pooled, initialized legacy session of the caller's
// principal (upstream/legacy.Pool).
//
// Over HTTP the face serves its requests itself (lean.go): the front
// (http.go) decodes each message once and checks it, the method's handler
// (dispatch) runs, and its answer is written straight onto the response,
// with go-sdk used only for JSON-RPC types. go-sdk's stateless server is
// built on first use for what it must answer: stdio (stdio.go), and HTTP
// requests go-sdk would answer differently (a missing Accept type, params of
// the wrong shape), which keep go-sdk's answers; the method handlers are the
// same on both paths (middleware).
//
// What go-sdk v1.8.0 does not provide is added: an
// HTTP front (and a stdio connection wrapper) that validates the era, the
// per-request _meta and the MCP-Protocol-Version / Mcp-Method / Mcp-Name
// headers including Mcp-Name = taskId on tasks/* (-32020, -32022, -32602,
// M-37, M-38, M-43, M-67), answers the removed tasks/result and tasks/list
// with 404 + -32601 (M-34, M-42, M-66) and serves subscriptions/listen for
// task ids; method handlers that answer every method from the
// upstream with results that carry resultType and _meta.serverInfo (M-41);
// and the tasks extension itself: tools/call → CreateTaskResult once the
// local→upstream mapping is durable in sessionmap (M-53), tasks/get with the
// payload fetched once from the upstream's tasks/result (M-55, M-56),
// input_required from the side-channel requests the bridge receives on the
// upstream's blocking tasks/result (M-57), tasks/update relaying answers by
// JSON-RPC id (M-58), tasks/cancel (M-59), notifications/tasks (M-63).
//
// Ordinary requests whose upstream sends server→client requests mid-call (a
// tool that elicits before it creates its task, or a synchronous tool that
// asks) become MRTR rounds (InputRequiredResult + requestState, M-48): the
// upstream call stays open in this process until the client retries.
//
// Principal binding (M-65): a request's principal is the SHA-256 of its
// Authorization header (sessionmap.PrincipalFromAuthorization); tasks are
// bound to it and a foreign task id is answered like an unknown one (-32602).
// A request without credentials belongs to the anonymous scope: its task ids
// (144 random bits) are then bearer tokens, as the extension allows ("MAY be
// used as bearer tokens"); Options.RequireAuth refuses such requests instead.
//
// DetectClientEra tells a dual-era dispatcher which face a request belongs to.
package modernface

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/internal/version"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// AnonymousScope is the sessionmap scope of requests without credentials.
var AnonymousScope = sessionmap.Scope{Session: "modern:anonymous"}

// Options configure a Face. Upstream and Store are required.
type Options struct {
	// Upstream is the pool of legacy upstream sessions.
	Upstream *legacyup.Pool
	// Store keeps the task mappings (durable before a CreateTaskResult, M-53).
	Store sessionmap.Store

	// ServerInfo goes into every result's _meta (M-41) when the upstream's
	// own is unknown; default tasksbridge/<version>.
	ServerInfo *modern.Implementation
	// SupportedVersions are named in -32022 errors (default ["2026-07-28"]; a
	// dual-era dispatcher adds the legacy revisions its legacy face serves).
	SupportedVersions []string
	// RequireAuth refuses requests without an Authorization header (HTTP 401)
	// instead of serving them in the anonymous scope.
	RequireAuth bool
	// AllowedOrigins are Origin values accepted besides loopback origins
	// (M-43: any other Origin gets 403).
	AllowedOrigins []string
	// JSONResponse answers with application/json instead of SSE (progress
	// notifications are then not relayed).
	JSONResponse bool

	// TaskTTL is the ttl the bridge asks the upstream to keep a task for
	// (legacy task.ttl, which the upstream may override, L-20); default 1 h.
	TaskTTL time.Duration
	// CacheTTL is the ttlMs of cacheable results (server/discover, lists);
	// default 0 (do not cache: they come from one principal's session).
	CacheTTL time.Duration
	// PollInterval is used when the upstream suggests none (default 1 s).
	PollInterval time.Duration
	// MRTRTimeout is how long an upstream call that asked for input waits
	// for the client's retry (default 5 min).
	MRTRTimeout time.Duration
	// ListenKeepAlive is the interval of SSE keep-alive comments on task
	// listen streams (default 15 s; negative disables).
	ListenKeepAlive time.Duration
	// IDs mints inputRequests keys (default: 128 random bits each).
	IDs translate.IDSource
	// Logger defaults to slog.Default(). Task ids and principals are logged
	// at debug level only.
	Logger *slog.Logger
	// Audit receives a record of each task created, cancelled, input
	// answered and terminal state delivered (L-79), with the principal hash,
	// never the credential (L-80); nil records nothing.
	Audit audit.Sink
}

// Face is the modern face. It is an http.Handler (mount it at /mcp) and
// serves stdio with Run.
type Face struct {
	opts    Options
	pool    *legacyup.Pool
	store   sessionmap.Store
	impl    modern.Implementation
	watch   *watch.Manager
	sealKey []byte // this process's own requestState key (statekey.go)
	ctx     context.Context
	cancel  context.CancelFunc
	log     *slog.Logger

	keyMu     sync.Mutex
	sharedKey []byte // the requestState key shared through the store, once read

	mu      sync.Mutex
	tasks   map[string]*taskRT      // by local task id
	pending map[string]*pendingCall // MRTR calls by token
	listens int

	wg sync.WaitGroup

	// go-sdk's server and HTTP handler, built on first use (gosdk): stdio,
	// and the HTTP requests the lean path (lean.go) leaves to it.
	sdkOnce   sync.Once
	mcp       *mcp.Server
	sdk       *mcp.StreamableHTTPHandler
	sdkErr    error
	sdkBuilds atomic.Int64 // how many times it was built (tests: 0 on the lean path)

	metas metaCache // decoded per-request _meta by its bytes (metacache.go)

	infoOnce sync.Once
	infoJSON json.RawMessage // impl encoded, for every result's _meta (M-41)
	infoErr  error
}

// New builds a Face.
func New(opts Options) (*Face, error) {
	if opts.Upstream == nil || opts.Store == nil {
		return nil, errors.New("modern face: Upstream and Store are required")
	}
	if opts.ServerInfo == nil {
		opts.ServerInfo = &modern.Implementation{Name: "tasksbridge", Version: version.Version}
	}
	if len(opts.SupportedVersions) == 0 {
		opts.SupportedVersions = []string{modern.ProtocolVersion}
	}
	if opts.TaskTTL <= 0 {
		opts.TaskTTL = time.Hour
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.MRTRTimeout <= 0 {
		opts.MRTRTimeout = 5 * time.Minute
	}
	if opts.ListenKeepAlive == 0 {
		opts.ListenKeepAlive = 15 * time.Second
	}
	if opts.IDs == nil {
		opts.IDs = translate.IDFunc(randomID)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &Face{
		opts: opts, pool: opts.Upstream, store: opts.Store, impl: *opts.ServerInfo,
		sealKey: randomKey(), ctx: ctx, cancel: cancel, log: opts.Logger,
		tasks: map[string]*taskRT{}, pending: map[string]*pendingCall{},
	}
	f.watch = watch.NewManager(watch.Config{
		Source:              f.watchSource,
		Sink:                watch.SinkFunc(f.observe),
		DefaultPollInterval: opts.PollInterval,
		MinPollInterval:     10 * time.Millisecond,
		MaxPollInterval:     10 * time.Second,
		IdleTimeout:         10 * time.Second,
		DisablePush:         true, // legacy upstreams are polled (their status notifications only kick a poll)
		Retryable:           legacyup.Retryable,
		Logger:              opts.Logger,
	})

	return f, nil
}

// gosdk returns go-sdk's server and stateless HTTP handler, building them
// on first use: a face that only ever sees requests the lean path answers
// never builds them.
func (f *Face) gosdk() (*mcp.Server, *mcp.StreamableHTTPHandler, error) {
	f.sdkOnce.Do(func() {
		f.sdkBuilds.Add(1)
		caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
		caps.AddExtension(modern.TasksExtensionID, nil)
		srv := mcp.NewServer(&mcp.Implementation{Name: f.impl.Name, Version: f.impl.Version}, &mcp.ServerOptions{
			Logger:                    f.opts.Logger,
			Capabilities:              caps,
			SupportedProtocolVersions: []string{modern.ProtocolVersion},
		})
		srv.AddReceivingMiddleware(f.middleware)
		for _, m := range []string{modern.MethodTasksGet, modern.MethodTasksUpdate, modern.MethodTasksCancel} {
			// Registered so go-sdk routes them; the middleware answers them.
			if err := mcp.AddReceivingCustomMethod(srv, m, f.unreachable); err != nil {
				f.sdkErr = fmt.Errorf("modern face: register %s: %w", m, err)
				return
			}
		}
		f.mcp = srv
		f.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
			Stateless:    true, // 2026-07-28 over HTTP has no sessions
			JSONResponse: f.opts.JSONResponse,
			Logger:       f.opts.Logger,
		})
	})
	return f.mcp, f.sdk, f.sdkErr
}

// Close ends task listens (with their result), pending MRTR calls and
// watchers. It does not close the pool or the store.
func (f *Face) Close() {
	f.cancel()
	f.watch.Close()
	f.mu.Lock()
	for _, pc := range f.pending {
		pc.cancel()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// rawParams keeps a request's params exactly as they arrived.
type rawParams = mcpio.RawParamsMeta

// rawResult returns JSON built by this package through go-sdk. It must be
// valid JSON (go-sdk never answers otherwise; docs/ARCHITECTURE.md, What
// go-sdk v1.8.0 leaves to the bridge).
type rawResult = mcpio.RawResult

func (f *Face) unreachable(context.Context, *mcp.ServerSession, *rawParams) (*rawResult, error) {
	return nil, rpc.Errorf(rpc.CodeInternalError, "modern face: request bypassed the middleware")
}

// reqKey carries per-request data from the transport front to the middleware.
type reqKey struct{}

// reqInfo is what the front learned about a request.
type reqInfo struct {
	principal     string
	authorization string
	method        string
	params        json.RawMessage // raw, as the client sent them
}

func withReq(ctx context.Context, ri *reqInfo) context.Context {
	return context.WithValue(ctx, reqKey{}, ri)
}

func reqFrom(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(reqKey{}).(*reqInfo)
	return ri
}

// scope is the sessionmap owner of a request's tasks.
func scopeOf(principal string) sessionmap.Scope {
	if principal != "" {
		return sessionmap.Scope{Principal: principal}
	}
	return AnonymousScope
}

// call is one request as the face's method handlers see it.
type call struct {
	method        string
	params        json.RawMessage
	meta          modern.RequestMeta
	principal     string
	authorization string
	// progress relays a progress notification to the request's stream
	// (go-sdk's session, or the lean path's response); nil: none goes out.
	progress func(context.Context, *mcp.ProgressNotificationParams)
	ctx      context.Context // the request's context while it is answered

	objOnce sync.Once
	obj     rawjson.Object // params split into members (members)
	objOK   bool
}

func (c *call) scope() sessionmap.Scope { return scopeOf(c.principal) }

// audit records one action of a client on task id (L-79); principal is the
// caller's hash, never its credential (L-80). Modern clients have no
// sessions.
func (f *Face) audit(action, principal, task, tool, outcome string, code int64) {
	audit.Record(f.opts.Audit, audit.Event{Action: action, Era: "modern", Principal: principal,
		Task: task, Tool: tool, Outcome: outcome, Code: code})
}

// caps are the client capabilities this request declared (none when absent).
func (c *call) caps() modern.ClientCapabilities {
	if c.meta.ClientCapabilities != nil {
		return *c.meta.ClientCapabilities
	}
	return modern.ClientCapabilities{}
}

// middleware answers every method the face serves; go-sdk only frames it.
func (f *Face) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !f.serves(method) {
			return next(ctx, method, req)
		}
		c := &call{method: method}
		if ri := reqFrom(ctx); ri != nil && ri.method == method {
			c.params, c.principal, c.authorization = ri.params, ri.principal, ri.authorization
		} else if rp, ok := req.GetParams().(*rawParams); ok && rp != nil {
			c.params = rp.JSON
		} else if p := req.GetParams(); p != nil {
			b, err := json.Marshal(p)
			if err != nil {
				return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: %v", err)
			}
			c.params = b
		}
		if len(c.params) == 0 || string(c.params) == "null" {
			c.params = json.RawMessage("{}")
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			c.progress = func(ctx context.Context, p *mcp.ProgressNotificationParams) { _ = ss.NotifyProgress(ctx, p) }
		}
		meta, err := modern.DecodeRequestMeta(c.params)
		if err != nil {
			return nil, err
		}
		if err := meta.Validate(); err != nil { // M-37
			return nil, err
		}
		c.meta = meta
		res, err := f.dispatch(ctx, c)
		if err != nil {
			return nil, err
		}
		return &rawResult{JSON: res}, nil
	}
}

// serves lists the methods the middleware answers.
func (f *Face) serves(method string) bool { return servedMethod(method) }

// Serves reports whether the face answers request method (the middleware's
// methods and subscriptions/listen); any other gets -32601 (M-42).
func Serves(method string) bool {
	return servedMethod(method) || method == modern.MethodSubscriptionsListen
}

func servedMethod(method string) bool {
	switch method {
	case modern.MethodDiscover, modern.MethodToolsList, modern.MethodToolsCall,
		modern.MethodPromptsList, modern.MethodPromptsGet, modern.MethodResourcesList,
		modern.MethodResourceTemplates, modern.MethodResourcesRead, modern.MethodCompletion,
		modern.MethodTasksGet, modern.MethodTasksUpdate, modern.MethodTasksCancel:
		return true
	}
	return false
}

// dispatch answers one request with the final result JSON.
func (f *Face) dispatch(ctx context.Context, c *call) (json.RawMessage, error) {
	switch c.method {
	case modern.MethodDiscover:
		return f.discover(ctx, c)
	case modern.MethodToolsList:
		return f.toolsList(ctx, c)
	case modern.MethodToolsCall:
		return f.toolsCall(ctx, c)
	case modern.MethodTasksGet:
		return f.tasksGet(ctx, c)
	case modern.MethodTasksUpdate:
		return f.tasksUpdate(ctx, c)
	case modern.MethodTasksCancel:
		return f.tasksCancel(ctx, c)
	}
	return f.passthrough(ctx, c)
}

// session returns the caller's upstream session.
func (f *Face) session(ctx context.Context, c *call) (*legacyup.Session, error) {
	s, err := f.pool.Session(ctx, c.principal, c.authorization)
	if err != nil {
		return nil, upstreamFailure(err)
	}
	return s, nil
}

// replacement returns the principal's new upstream session when a request
// on s failed before the upstream processed it because the upstream lost the
// session (HTTP 404 after a restart or an expiry; another bridge process may
// have replaced it already): the request is then sent once more on the new
// session — it never ran. nil when err is anything else.
func (f *Face) replacement(ctx context.Context, c *call, s *legacyup.Session, err error) *legacyup.Session {
	if !legacyup.Unsent(err) || !errorsIsGone(err) {
		return nil
	}
	next, nerr := f.pool.Session(ctx, c.principal, c.authorization)
	if nerr != nil || next == s {
		return nil
	}
	f.log.Info("modern face: the upstream lost the principal's session; the request goes to its new session", "upstream", f.pool.Target())
	return next
}

// upstreamFailure turns a transport failure into the -32603 a modern client
// sees (M-62: informative; it names the upstream). Upstream JSON-RPC errors go
// through translate.ErrorToModern instead.
func upstreamFailure(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return rpc.Errorf(rpc.CodeInternalError, "%v", err)
	}
	return edge.KeepRefusal(rpc.As(err), err) // a 401/403 is relayed (autherr.go)
}

// upstreamError maps an error of an upstream call for a modern client.
func upstreamError(method string, err error) error {
	var te *legacyup.Error
	if errors.As(err, &te) {
		return edge.KeepRefusal(te.RPC, err)
	}
	var re *rpc.Error
	if errors.As(err, &re) {
		return translate.ErrorToModern(method, re)
	}
	return upstreamFailure(err)
}

// resultMeta is the _meta every result carries: serverInfo (M-41).
func (f *Face) resultMeta() modern.Object {
	m, err := modern.WithServerInfo(nil, f.impl)
	if err != nil {
		return nil
	}
	return m
}

// finish makes an upstream result a 2026-07-28 one (translate.ResultToModern:
// resultType, the CacheableResult members where the method needs them, no
// related-task _meta) and adds _meta.serverInfo (M-41). resultType, when set,
// is forced.
func (f *Face) finish(method string, raw json.RawMessage, resultType modern.ResultType) (json.RawMessage, error) {
	out, err := translate.ResultToModern(method, raw, f.opts.CacheTTL.Milliseconds(), modern.CachePrivate)
	if err != nil {
		return nil, rpc.As(err)
	}
	info, err := f.serverInfoJSON()
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "result _meta: %v", err)
	}
	if resultType == "" || resultType == modern.ResultComplete { // ResultToModern set "complete"
		if b, ok := appendServerInfo(out, info); ok {
			return b, nil
		}
	}
	var o rawjson.Object
	if rawjson.IsObject(out) {
		o, err = rawjson.Decode(out)
	}
	if err != nil || !rawjson.IsObject(out) {
		return nil, rpc.Errorf(rpc.CodeInternalError, "upstream %s result is not a JSON object", method)
	}
	if resultType != "" {
		rt, err := rawjson.Marshal(resultType)
		if err != nil {
			return nil, rpc.Errorf(rpc.CodeInternalError, "result: %v", err)
		}
		o.Put("resultType", rt)
	}
	var meta rawjson.Object
	if m, ok := o.Get("_meta"); ok && rawjson.IsObject(m) {
		if mo, err := rawjson.Decode(m); err == nil {
			meta = mo
		}
	}
	meta.Put(modern.MetaKeyServerInfo, info)
	o.Put("_meta", meta.Bytes())
	return o.Bytes(), nil
}

// appendServerInfo adds {"_meta":{serverInfo}} to a compact result object
// that has no _meta (M-41), by appending the member; false when the result
// may have one (the bytes "_meta" or any escape appear), which then goes
// through the member-wise edit.
func appendServerInfo(out, info json.RawMessage) (json.RawMessage, bool) {
	if len(out) < 2 || out[0] != '{' || out[len(out)-1] != '}' ||
		bytes.Contains(out, []byte("_meta")) || bytes.IndexByte(out, '\\') >= 0 {
		return nil, false
	}
	b := make([]byte, 0, len(out)+len(serverInfoPrefix)+len(info)+3)
	b = append(b, out[:len(out)-1]...)
	if len(bytes.TrimSpace(out[1:len(out)-1])) > 0 {
		b = append(b, ',')
	}
	b = append(b, serverInfoPrefix...)
	b = append(b, info...)
	return append(b, '}', '}'), true
}

// serverInfoPrefix opens the _meta member appendServerInfo adds.
var serverInfoPrefix = `"_meta":{` + string(rawjson.Key(modern.MetaKeyServerInfo)) + `:`

// serverInfoJSON is the face's serverInfo as JSON, encoded once.
func (f *Face) serverInfoJSON() (json.RawMessage, error) {
	f.infoOnce.Do(func() { f.infoJSON, f.infoErr = f.impl.MarshalJSON() })
	return f.infoJSON, f.infoErr
}

// marshalResult encodes a typed modern result.
func marshalResult(v json.Marshaler) (json.RawMessage, error) {
	b, err := v.MarshalJSON()
	if err != nil {
		return nil, rpc.As(err)
	}
	return b, nil
}
