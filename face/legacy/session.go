package legacyface

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/version"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// legacyVersions are the protocol versions the face negotiates. Legacy tasks
// exist only under 2025-11-25; older sessions get plain forwarding.
var legacyVersions = []string{legacy.ProtocolVersion, "2025-06-18", "2025-03-26", "2024-11-05"}

const (
	transportHTTP  = "http"
	transportStdio = "stdio"
)

// session is one legacy client session: its go-sdk server and session, what
// it negotiated, and the input keys it was shown.
type session struct {
	b         *Bridge
	id        string
	principal string
	transport string
	source    source // the share of the session table it counts against (sessionshare.go)

	mu              sync.Mutex
	srv             *mcp.Server
	ss              *mcp.ServerSession
	getStream       *streamWriter // the open standalone GET stream (HTTP), for status notifications
	initParams      json.RawMessage
	protocolVersion string
	logLevel        string
	meta            *modern.PreparedMeta // per-request _meta for upstream (cached, prepared)
	// The session's shared copies of what its requests carry alike
	// (shared.go).
	sharedAuthz string
	sharedFwd   http.Header
	sharedOpts  *modernup.CallOptions
	rehydrating bool
	presented   map[string]map[string]bool // local task id → input keys shown to this session (nil until used)
	watched     map[string]bool            // local task ids with a status-notification follower (nil until used)
	notify      func(method string, params json.RawMessage) error
	closed      bool
	subs        *subscriptions

	// life ends when the session does (DELETE, idle expiry, shutdown):
	// waits of its requests hand back, followers stop. Made on first use
	// (lifeCtx): an idle session holds none.
	life context.Context
	end  context.CancelFunc

	// calls are the session's lean requests in flight, by JSON-RPC id
	// (callID), for notifications/cancelled: a map of the session's rather
	// than an entry and a key naming the session in a process-wide map,
	// for each of thousands of parked waits.
	callMu sync.Mutex
	calls  map[string]*leanCall

	// parked are the session's parked waits, which its end stops: one
	// hook on life for all of them (parkHooked), not one per wait.
	parkMu     sync.Mutex
	parked     map[*parkCtl]struct{}
	parkHooked bool

	// sdkMu serialises building the go-sdk part (materialize).
	sdkMu sync.Mutex

	// Bookkeeping of the session table (sessions.go), under Bridge.mu.
	lastSeen   time.Time // the bridge's clock, at the latest request
	storeTouch time.Time // when the store's idle expiry was last slid
	busy       int       // requests in flight
	inTable    bool
	started    bool // counted as open in the hooks until it ends

	// The idle LRU (dormant.go), under Bridge.mu.
	idlePrev, idleNext *session
	onIdle             bool
}

func (b *Bridge) newSession(id, principal, transport string) *session {
	return &session{b: b, id: id, principal: principal, transport: transport}
}

// lifeCtx is the session's life: cancelled when the session ends.
func (s *session) lifeCtx() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.life == nil {
		s.life, s.end = context.WithCancel(context.Background())
		if s.closed {
			s.end()
		}
	}
	return s.life
}

// done is closed when the session ends.
func (s *session) done() <-chan struct{} { return s.lifeCtx().Done() }

// randomID returns 128 bits from crypto/rand, base64url (session ids, nonces).
func randomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("face: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// scope is the owner of what this session creates and may read.
func (s *session) scope() sessionmap.Scope {
	return sessionmap.Scope{Principal: s.principal, Session: s.id}
}

// tasksEnabled reports whether the session negotiated 2025-11-25, the only
// version with legacy tasks.
func (s *session) tasksEnabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.protocolVersion == legacy.ProtocolVersion
}

func (s *session) serverSession() *mcp.ServerSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ss
}

// requestMeta is the per-request _meta the session stamps upstream (M-01,
// M-02, M-20): the client's own capabilities plus the tasks extension,
// its clientInfo and its log level.
//
// It is cached prepared (encoded and validated once, M-01): every forwarded
// request stamps it, and it changes only with the session (initialize,
// logging/setLevel clear the cache).
func (s *session) requestMeta() (modern.RequestMeta, error) {
	p, err := s.preparedMeta()
	if err != nil {
		return modern.RequestMeta{}, err
	}
	return p.Meta(), nil
}

// preparedMeta is requestMeta, prepared for modern.StampPreparedMeta.
func (s *session) preparedMeta() (*modern.PreparedMeta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.meta != nil {
		return s.meta, nil
	}
	fallback := modern.Implementation{Name: "tasksbridge-legacy-client", Version: version.Version}
	m, err := translate.UpstreamRequestMeta(s.initParams, s.logLevel, &fallback)
	if err != nil {
		return nil, err
	}
	s.meta = modern.PrepareRequestMeta(m)
	return s.meta, nil
}

// callOptions are the upstream options of one request of this session, and
// its per-request _meta prepared for translate.RequestToModernPrepared.
func (s *session) callOptions(ri *reqInfo) (modernup.CallOptions, *modern.PreparedMeta, error) {
	p, err := s.preparedMeta()
	if err != nil {
		return modernup.CallOptions{}, nil, err
	}
	m := p.Meta()
	opts := modernup.CallOptions{ClientInfo: m.ClientInfo, LogLevel: m.LogLevel}
	if m.ClientCapabilities != nil {
		opts.Capabilities = *m.ClientCapabilities
	}
	if ri != nil {
		opts.Authorization = ri.authz
		opts.Header = ri.fwd // callers that add headers merge (mergeHeader)
		s.noteCredential(ri)
	}
	return opts, p, nil
}

// clientCaps are the capabilities the bridge declares upstream for this
// client (what the upstream may ask it for, L-82).
func (s *session) clientCaps() modern.ClientCapabilities {
	m, err := s.requestMeta()
	if err != nil || m.ClientCapabilities == nil {
		return modern.ClientCapabilities{}
	}
	return *m.ClientCapabilities
}

// close ends the go-sdk session (its streams) and the session's followers.
func (s *session) close() {
	s.mu.Lock()
	ss := s.ss
	s.closed = true
	subs := s.subs
	s.subs = nil
	end := s.end
	s.mu.Unlock()
	if end != nil {
		end()
	}
	if subs != nil {
		subs.close()
	}
	if ss != nil {
		ss.Close()
	}
}

// reqInfo is what the bridge's transport layer knows about one incoming
// request and go-sdk does not pass on: the raw params, the Authorization
// header, when the client went away, and the response stream.
type reqInfo struct {
	method string
	raw    json.RawMessage
	authz  string
	// fwd are the client's trace and X-Forwarded-* headers for the
	// upstream (edge.Request.ForwardHeader; nil on stdio).
	fwd    http.Header
	stream *streamWriter // HTTP POST response stream of the go-sdk path (nil on stdio and the lean path)
	out    *leanOut      // the lean path's response (nil on the go-sdk path)
	id     jsonrpc.ID    // the request's JSON-RPC id (lean path)
	// refusal is the upstream's 401/403 the handler failed with (go-sdk
	// path: refusalWriter relays it).
	refusal refusalBox

	// over ends when the HTTP request (or stdio call) is over.
	over   context.Context
	finish context.CancelFunc
}

func newReqInfo(method string, raw json.RawMessage, authz string) *reqInfo {
	ri := &reqInfo{method: method, raw: raw, authz: authz}
	ri.over, ri.finish = context.WithCancel(context.Background())
	return ri
}

// hdrNonce carries the reqInfo key through go-sdk's RequestExtra.Header. The
// bridge deletes any client-sent value first, so a client cannot name
// another request's record.
const hdrNonce = "X-Tasksbridge-Request"

type reqInfoKey struct{}

func withReqInfo(ctx context.Context, ri *reqInfo) context.Context {
	return context.WithValue(ctx, reqInfoKey{}, ri)
}

func reqInfoFrom(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(reqInfoKey{}).(*reqInfo)
	return ri
}

func (b *Bridge) lookupReqInfo(req mcp.Request) *reqInfo {
	ex := req.GetExtra()
	if ex == nil || ex.Header == nil {
		return nil
	}
	n := ex.Header.Get(hdrNonce)
	if n == "" {
		return nil
	}
	v, ok := b.reqs.Load(n)
	if !ok {
		return nil
	}
	return v.(*reqInfo)
}

// rawResult is a result whose JSON the bridge built itself (legacy shapes the
// typed go-sdk results cannot express). The bytes come from json.Marshal or
// from validated translations, so they are always valid JSON (go-sdk never
// answers a request whose result is not; docs/ARCHITECTURE.md, What go-sdk
// v1.8.0 leaves to the bridge).
type rawResult = mcpio.RawResult

func newRaw(v any) (*rawResult, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if !json.Valid(raw) {
			return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: invalid result JSON")
		}
		return &rawResult{JSON: raw}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: encode result: %v", err)
	}
	return &rawResult{JSON: b}, nil
}

// rawParams receives the params of the tasks/* custom methods untouched, so
// the legacy decoders give precise -32602 messages.
type rawParams = mcpio.RawParams

// sdkLogger passes go-sdk's warnings and errors on; its info logs name
// session ids, which must not appear at info level (docs/ARCHITECTURE.md,
// No secret or id in logs and labels).
func (b *Bridge) sdkLogger() *slog.Logger {
	return slog.New(minLevel{h: b.log.Handler(), min: slog.LevelWarn})
}

type minLevel struct {
	h   slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.h.Enabled(ctx, l)
}
func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }
func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h: m.h.WithAttrs(a), min: m.min}
}
func (m minLevel) WithGroup(n string) slog.Handler { return minLevel{h: m.h.WithGroup(n), min: m.min} }

// newServer builds the go-sdk server of one session (nil: the base server
// that only answers go-sdk's version checks). One server per session lets
// GetSessionID hand out the id the bridge chose, including an old one when a
// session is rehydrated.
func (b *Bridge) newServer(s *session) *mcp.Server {
	opts := &mcp.ServerOptions{
		Logger:                    b.sdkLogger(),
		SupportedProtocolVersions: legacyVersions,
		Capabilities:              &mcp.ServerCapabilities{},
	}
	if s == nil {
		opts.GetSessionID = randomID
		return mcp.NewServer(&mcp.Implementation{Name: "tasksbridge", Version: version.Version}, opts)
	}
	opts.GetSessionID = func() string { return s.id }
	opts.SubscribeHandler = s.subscribeHandler
	opts.UnsubscribeHandler = s.unsubscribeHandler
	srv := mcp.NewServer(&mcp.Implementation{Name: "tasksbridge", Version: version.Version}, opts)
	srv.AddReceivingMiddleware(s.middleware)
	for _, method := range legacyTaskMethods {
		err := mcp.AddReceivingCustomMethod(srv, method, func(ctx context.Context, _ *mcp.ServerSession, p *rawParams) (*rawResult, error) {
			return s.tasksCall(ctx, reqInfoFrom(ctx), method, p.Bytes())
		})
		if err != nil {
			panic("face: " + err.Error()) // only for a standard method name: a programming error
		}
	}
	return srv
}

// legacyTaskMethods are the 2025-11-25 tasks/* methods the face emulates.
var legacyTaskMethods = []string{legacy.MethodTasksGet, legacy.MethodTasksResult, legacy.MethodTasksList, legacy.MethodTasksCancel}

// tasksCall runs one tasks/* method for both request paths: -32601 on a
// session that did not negotiate 2025-11-25, the only version with legacy
// tasks.
func (s *session) tasksCall(ctx context.Context, ri *reqInfo, method string, raw json.RawMessage) (*rawResult, error) {
	if !s.tasksEnabled() {
		return nil, rpc.Errorf(rpc.CodeMethodNotFound,
			"Method not found: %s (legacy tasks exist only under protocol version %s)", method, legacy.ProtocolVersion)
	}
	var (
		res mcp.Result
		err error
	)
	switch method {
	case legacy.MethodTasksGet:
		res, err = s.tasksGet(ctx, ri, raw)
	case legacy.MethodTasksResult:
		res, err = s.tasksResult(ctx, ri, raw)
	case legacy.MethodTasksList:
		res, err = s.tasksList(ctx, ri, raw)
	case legacy.MethodTasksCancel:
		res, err = s.tasksCancel(ctx, ri, raw)
	default:
		return nil, rpc.Errorf(rpc.CodeMethodNotFound, "Method not found: %s", method)
	}
	return asRaw(res, err)
}

// asRaw is a handler's answer as the raw result both request paths write.
func asRaw(res mcp.Result, err error) (*rawResult, error) {
	if err != nil {
		return nil, err
	}
	r, ok := res.(*rawResult)
	if !ok {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: unexpected result type")
	}
	return r, nil
}

// middleware is the session's receiving middleware: it recovers the
// transport's request record, answers what the bridge emulates or forwards,
// and reports every request to the hooks.
func (s *session) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ri := s.b.lookupReqInfo(req)
		if ri == nil {
			authz := ""
			if ex := req.GetExtra(); ex != nil && ex.Header != nil {
				authz = ex.Header.Get("Authorization")
			}
			ri = newReqInfo(method, nil, authz)
		}
		if ri.raw == nil {
			if p := req.GetParams(); p != nil {
				if b, err := json.Marshal(p); err == nil {
					ri.raw = b
				}
			}
		}
		ctx = withReqInfo(ctx, ri)
		start := time.Now()
		res, err := s.dispatch(ctx, ri, method, req, next)
		ri.noteRefusal(err)
		if h := s.b.cfg.Hooks.Request; h != nil && !isNotification(method) {
			ev := RequestEvent{Method: method, Era: "legacy", Outcome: OutcomeOK, Duration: time.Since(start)}
			if err != nil {
				ev.Outcome, ev.Code = outcomeOf(err)
			}
			h(ev)
		}
		if err != nil {
			return nil, wireError(err)
		}
		return res, nil
	}
}

func isNotification(method string) bool { return len(method) > 14 && method[:14] == "notifications/" }

// wireError makes sure the client gets a JSON-RPC error with a code: an
// *rpc.Error passes unchanged, a context error becomes "request cancelled",
// anything else -32603 (L-66).
func wireError(err error) error {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return rpc.Errorf(rpc.CodeInternalError, "request cancelled")
	}
	return rpc.Errorf(rpc.CodeInternalError, "internal error: %v", err)
}

func (s *session) dispatch(ctx context.Context, ri *reqInfo, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	switch method {
	case legacy.MethodInitialize:
		return s.initialize(ctx, ri, req, next)
	case "logging/setLevel":
		return s.setLevel(ctx, req, next)
	case legacy.MethodToolsList:
		return s.toolsList(ctx, ri)
	case legacy.MethodToolsCall:
		return s.toolsCall(ctx, ri)
	case "resources/list", "resources/templates/list", "resources/read",
		"prompts/list", "prompts/get", "completion/complete":
		return s.forward(ctx, ri, method)
	case "resources/subscribe", "resources/unsubscribe":
		// go-sdk keeps the subscription registry (for ResourceUpdated) and
		// calls the session's Subscribe/UnsubscribeHandler.
		return next(ctx, method, req)
	case modern.MethodSubscriptionsListen, modern.MethodDiscover:
		return nil, rpc.Errorf(rpc.CodeMethodNotFound, "Method not found: %s is a 2026-07-28 method; this session speaks %s", method, s.protocolVersionOr())
	}
	return next(ctx, method, req)
}

func (s *session) protocolVersionOr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.protocolVersion == "" {
		return legacy.ProtocolVersion
	}
	return s.protocolVersion
}

// initialize is the go-sdk path's handshake (stdio, and the replay that
// gives an HTTP session its go-sdk half): the upstream is asked first (if it
// cannot answer, go-sdk never records the handshake and drops the half-made
// session), go-sdk negotiates the version, and the answer comes from the
// upstream's server/discover with the session stored first (L-01..L-04).
func (s *session) initialize(ctx context.Context, ri *reqInfo, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	s.mu.Lock()
	rehydrating := s.rehydrating
	if !rehydrating {
		s.initParams = ri.raw
		s.meta = nil
	}
	s.mu.Unlock()
	var disc json.RawMessage
	if !rehydrating {
		var err error
		if disc, err = s.discoverFor(ctx, ri); err != nil {
			return nil, err
		}
	}
	res, err := next(ctx, legacy.MethodInitialize, req)
	if err != nil {
		return nil, err
	}
	ir, ok := res.(*mcp.InitializeResult)
	if !ok {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: unexpected initialize result %T", res)
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	s.mu.Lock()
	s.ss = ss
	s.protocolVersion = ir.ProtocolVersion
	s.mu.Unlock()
	if rehydrating {
		return res, nil // replayed: nothing to ask or store
	}
	out, err := s.buildInitialize(ctx, ri, disc, ir.ProtocolVersion)
	if err != nil {
		return nil, err
	}
	s.b.sessionStarted(s)
	return newRaw(out)
}

// setLevel lets go-sdk record the level (it filters log notifications by it)
// and stores it, so it is stamped on later upstream requests and survives a
// restart.
func (s *session) setLevel(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	res, err := next(ctx, "logging/setLevel", req)
	if err != nil {
		return nil, err
	}
	p, _ := req.GetParams().(*mcp.SetLoggingLevelParams)
	if p == nil {
		return res, nil
	}
	level := string(p.Level)
	s.mu.Lock()
	s.logLevel = level
	s.meta = nil
	rehydrating := s.rehydrating
	s.mu.Unlock()
	if !rehydrating {
		if _, err := s.b.store.TouchSession(ctx, s.scope(), &level); err != nil {
			s.b.log.Warn("face: cannot store the session log level", "err", err)
		}
	}
	return res, nil
}

// setMember returns obj with key set to the JSON encoding of v.
func setMember(obj json.RawMessage, key string, v any) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: %v", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: %v", err)
	}
	m[key] = b
	return json.Marshal(m)
}

// upstreamError maps an error of an upstream request to what the legacy
// client sees: the upstream's own JSON-RPC errors through ErrorToLegacy,
// transport failures as the -32603 naming the upstream.
func (b *Bridge) upstreamError(method string, taskAugmented bool, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var ue *modernup.Error
	if errors.As(err, &ue) {
		return edge.KeepRefusal(ue.RPC, err) // a 401/403 is relayed (autherr.go)
	}
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		return translate.ErrorToLegacy(method, taskAugmented, re)
	}
	return rpc.Errorf(rpc.CodeInternalError, "upstream %s: %v", b.target, err)
}

// statusText is "404 Not Found" and the like, for plain-text HTTP errors.
func statusText(code int) string { return fmt.Sprintf("%d %s", code, http.StatusText(code)) }

// claimGETStream makes sw the session's standalone GET stream unless one is
// open already on this replica (then it reports false).
func (s *session) claimGETStream(sw *streamWriter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.getStream != nil {
		return false
	}
	s.getStream = sw
	return true
}

func (s *session) clearGETStream(sw *streamWriter) {
	s.mu.Lock()
	if s.getStream == sw {
		s.getStream = nil
	}
	s.mu.Unlock()
}

// sendNotification writes a notification go-sdk has no API for
// (notifications/tasks/status): on stdio through the connection, over HTTP
// on the open standalone GET stream. It reports whether it was sent.
func (s *session) sendNotification(method string, params any) bool {
	p, err := json.Marshal(params)
	if err != nil {
		return false
	}
	s.mu.Lock()
	notify, gs := s.notify, s.getStream
	s.mu.Unlock()
	if notify != nil {
		return notify(method, p) == nil
	}
	if gs == nil {
		return false
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": json.RawMessage(p)})
	if err != nil {
		return false
	}
	return gs.inject(msg) == nil
}
