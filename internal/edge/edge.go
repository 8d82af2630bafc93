// Package edge is the one place every HTTP request to the bridge's MCP
// endpoint passes before anything else reads it, whichever path then serves
// it (the legacy face, the modern face or the passthrough): the Host and
// Origin policy (Policy), the trusted-proxy policy (whose X-Forwarded-*,
// Forwarded and identity headers are believed), the public URL the client
// dialed, the bounded read of the POST body, and the principal
// (identity.Resolver). The paths read the outcome with FromContext and
// neither re-check, re-read nor re-resolve.
package edge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/httpguard"
	"github.com/tasksbridge/tasksbridge/internal/identity"
	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// DefaultMaxBodyBytes bounds a POST body when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 4 << 20

// Headers the trusted-proxy policy governs: believed only from a
// --trusted-proxy peer, deleted from every other request before anything
// reads them.
var proxyHeaders = []string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-Port", "Forwarded", "X-Real-Ip"}

// Trace headers passed on to the upstream on translated paths (W3C Trace
// Context; X-Request-Id by convention). The passthrough passes every header.
var traceHeaders = []string{"Traceparent", "Tracestate", "X-Request-Id"}

// Config configures an Edge.
type Config struct {
	// Policy is the Host and Origin policy (see Policy).
	Policy Policy
	// TrustedProxies are the peers whose X-Forwarded-*, Forwarded and
	// IdentityHeaders are believed; from anyone else they are deleted.
	TrustedProxies []netip.Prefix
	// IdentityHeaders are headers that carry an identity a gateway vouches
	// for (--principal header:NAME): deleted unless the peer is trusted.
	IdentityHeaders []string
	// PublicURL is the endpoint URL clients dial (--public-url); "" derives
	// it per request from the scheme (TLS, or a trusted X-Forwarded-Proto),
	// the Host (or a trusted X-Forwarded-Host) and EndpointPath.
	PublicURL string
	// EndpointPath is the MCP endpoint's path (default "/mcp"): the public
	// URL of a request to another path (Guard) still names the endpoint.
	EndpointPath string
	// Resolver decides each request's principal (default
	// identity.AuthorizationHeader{}).
	Resolver identity.Resolver
	// NoForwardedHeaders stops the bridge adding X-Forwarded-For, -Proto and
	// -Host to upstream requests (trace headers still pass).
	NoForwardedHeaders bool
	// MaxBodyBytes bounds a POST body: 413 above it (default
	// DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MetadataURL returns the protected resource metadata URL (RFC 9728)
	// of a public URL, for the resource_metadata of the bridge's own
	// challenges; nil or "": the parameter is left out.
	MetadataURL func(publicURL string) string
	// Relay answers upstream 401/403 refusals on every path
	// (RelayAuthError) and serves the bridge's protected resource metadata;
	// nil: refusals point at the request's own metadata URL.
	Relay *oauthmeta.Relay
	// Logger receives refusals (default slog.Default()).
	Logger *slog.Logger
}

// Edge applies Config to requests. Its methods are safe for concurrent use.
type Edge struct {
	cfg Config
	// live holds Policy, TrustedProxies and MaxBodyBytes, which Reconfigure
	// swaps while requests are served (SIGHUP); one atomic load per request,
	// no allocation (live.go).
	live        atomic.Pointer[Live]
	defaultAuth bool // Resolver is identity.AuthorizationHeader: no audience needed
	log         *slog.Logger
	// fwdSets are the ForwardHeader sets of requests that carry no trace
	// header, shared by the requests with the same ones.
	fwdSets fwdSets
}

// fwdSets shares ForwardHeader's sets among requests: without trace
// headers a request's set depends only on its X-Forwarded-For, -Host and
// -Proto, which clients behind one proxy, or one client's connections,
// have in common. A parked legacy tasks/result keeps its request's set for
// as long as it waits (for the upstream calls it may still make), so
// 10,000 waits kept 10,000 maps of three entries; now they keep the few
// distinct sets, each a map read by any number of requests and written by
// none (ForwardHeader's callers must not modify it).
type fwdSets struct {
	mu sync.RWMutex
	m  map[string]http.Header // by fwdKey
}

// Bounds of the shared sets: a full table starts over (sets already
// handed out stay valid), and a request whose key is longer (a long proxy
// chain or Host) gets a set of its own.
const (
	maxFwdSets   = 1024
	maxFwdKeyLen = 512
)

// get returns the shared set for r (its key in key, built by fwdKey),
// making it with SetForwarded on first use.
func (s *fwdSets) get(r *Request, key []byte) http.Header {
	cacheable := len(key) <= maxFwdKeyLen
	if cacheable {
		s.mu.RLock()
		h, ok := s.m[string(key)]
		s.mu.RUnlock()
		if ok {
			return h
		}
	}
	h := http.Header{}
	r.SetForwarded(h)
	if !cacheable {
		return h
	}
	s.mu.Lock()
	if prev, ok := s.m[string(key)]; ok {
		h = prev // another request made it meanwhile
	} else {
		if s.m == nil || len(s.m) >= maxFwdSets {
			s.m = make(map[string]http.Header)
		}
		s.m[string(key)] = h
	}
	s.mu.Unlock()
	return h
}

// New returns an Edge for cfg.
func New(cfg Config) (*Edge, error) {
	if cfg.Resolver == nil {
		cfg.Resolver = identity.AuthorizationHeader{}
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.EndpointPath == "" {
		cfg.EndpointPath = "/mcp"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	idh := make([]string, len(cfg.IdentityHeaders))
	for i, h := range cfg.IdentityHeaders {
		idh[i] = http.CanonicalHeaderKey(h)
	}
	cfg.IdentityHeaders = idh
	_, def := cfg.Resolver.(identity.AuthorizationHeader)
	e := &Edge{cfg: cfg, defaultAuth: def, log: cfg.Logger}
	e.Reconfigure(Live{Policy: cfg.Policy, TrustedProxies: cfg.TrustedProxies, MaxBodyBytes: cfg.MaxBodyBytes})
	return e, nil
}

// Request is what the edge knows about one request; the paths read it with
// FromContext. PublicURL, ForwardHeader and Message are computed on first
// use (the passthrough, the hot path, needs none of them in the default
// mode).
type Request struct {
	// Body is the POST body, read once and bounded; nil for other methods.
	Body []byte
	// Principal is who the request acts for (identity.Resolver).
	Principal identity.Principal
	// Peer is the direct peer's address (zero when RemoteAddr is not an
	// IP:port, e.g. a Unix socket or a test).
	Peer netip.AddrPort
	// Trusted reports whether Peer is a --trusted-proxy.
	Trusted bool

	e   *Edge
	hdr http.Header
	// mu guards the memos public, fwd and fwdDone: upstream calls that
	// outlive the handler's goroutine (a face's detached call) read them.
	mu                 sync.Mutex
	host, scheme, path string
	public             string
	fwd                http.Header
	fwdDone, msgDone   bool
	msg                jsonrpc.Message
	msgErr             error
	xffPrior           string
}

// PublicURL is the URL of the MCP endpoint the client dialed.
func (r *Request) PublicURL() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.public == "" {
		if r.e != nil && r.e.cfg.PublicURL != "" {
			r.public = r.e.cfg.PublicURL
		} else {
			r.public = r.scheme + "://" + r.host + r.path
		}
	}
	return r.public
}

// Message is the POST body decoded once (internal/mcpio.DecodeMessage; its
// params and result share Body's bytes), for the goroutine serving the
// request. A body that is no single JSON-RPC
// message gives the decoder's error, one nested deeper than
// rawjson.DefaultMaxDepth a *rawjson.DepthError.
func (r *Request) Message() (jsonrpc.Message, error) {
	if !r.msgDone {
		r.msgDone = true
		switch {
		case r.Body == nil:
			r.msgErr = errors.New("no body")
		default:
			// Nothing recursive reads a body nested deeper than the
			// bridge's limit (the router refuses it first; a face served
			// on its own relies on this).
			r.msg, r.msgErr = mcpio.DecodeChecked(r.Body)
		}
	}
	return r.msg, r.msgErr
}

// ReadMessage is a face's POST body and its message: those the edge read
// and decoded when the request passed it; otherwise (a face served on its
// own, in tests) the body read here and decoded as the edge does. ok is
// false when the body was too large or unreadable: w is answered, in words.
// err is the decoder's (Message).
func ReadMessage(w http.ResponseWriter, r *http.Request, limit int64, words mcpio.BodyWords) (body []byte, msg jsonrpc.Message, ok bool, err error) {
	if er, fromEdge := FromContext(r.Context()); fromEdge {
		msg, err = er.Message()
		return er.Body, msg, true, err
	}
	if body, ok = mcpio.ReadBody(w, r, limit, words); !ok {
		return nil, nil, false, nil
	}
	msg, err = mcpio.DecodeChecked(body)
	return body, msg, true, err
}

// ForwardHeader are the headers translated paths add to their upstream
// requests: traceparent, tracestate and X-Request-Id as the client sent
// them, and (unless --no-forwarded-headers) X-Forwarded-For, -Proto and
// -Host with httputil.ProxyRequest.SetXForwarded's meaning: the peer is
// appended to a trusted proxy's X-Forwarded-For chain and replaces an
// untrusted one (deleted at the edge). Nil when there is nothing to add.
// The caller must not modify it: requests without trace headers share
// their set with the requests that have the same one (fwdSets).
func (r *Request) ForwardHeader() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fwdDone {
		return r.fwd
	}
	r.fwdDone = true
	if r.e != nil && !r.e.cfg.NoForwardedHeaders && !r.traced() {
		var buf [256]byte
		r.fwd = r.e.fwdSets.get(r, r.fwdKey(buf[:0]))
		return r.fwd
	}
	var h http.Header
	for _, k := range traceHeaders {
		if vs := r.hdr[k]; len(vs) > 0 {
			if h == nil {
				h = http.Header{}
			}
			h[k] = vs
		}
	}
	if r.e != nil && !r.e.cfg.NoForwardedHeaders {
		if h == nil {
			h = http.Header{}
		}
		r.SetForwarded(h)
	}
	r.fwd = h
	return h
}

// traced reports whether the request carries a trace header (traceHeaders).
func (r *Request) traced() bool {
	for _, k := range traceHeaders {
		if len(r.hdr[k]) > 0 {
			return true
		}
	}
	return false
}

// fwdKey appends to b what SetForwarded's values depend on: the Host, the
// scheme and the X-Forwarded-For value.
func (r *Request) fwdKey(b []byte) []byte {
	b = append(append(append(b, r.host...), 0), r.scheme...)
	return r.appendFor(append(b, 0))
}

// appendFor appends the X-Forwarded-For value: a trusted proxy's chain
// with the peer appended, or the peer.
func (r *Request) appendFor(b []byte) []byte {
	if !r.Peer.IsValid() {
		return append(b, r.xffPrior...)
	}
	if r.xffPrior != "" {
		b = append(append(b, r.xffPrior...), ", "...)
	}
	return r.Peer.Addr().AppendTo(b)
}

// SetForwarded sets X-Forwarded-For, -Host and -Proto in h for this request
// (see ForwardHeader); nothing with --no-forwarded-headers.
func (r *Request) SetForwarded(h http.Header) {
	if r.e == nil || r.e.cfg.NoForwardedHeaders {
		return
	}
	// Two allocations (the three values' slice and the For chain) on the
	// passthrough's hot path, where SetXForwarded would take five.
	vals := make([]string, 3)
	vals[1], vals[2] = r.host, r.scheme
	if r.Peer.IsValid() {
		var buf [64]byte
		vals[0] = string(r.appendFor(buf[:0]))
	} else {
		vals[0] = r.xffPrior
	}
	if vals[0] != "" {
		h["X-Forwarded-For"] = vals[0:1:1]
	}
	h["X-Forwarded-Host"] = vals[1:2:2]
	h["X-Forwarded-Proto"] = vals[2:3:3]
}

type contextKey struct{}

// ContextKey is the context key of a *Request: for contexts that carry one
// in a field of their own (a Value method answering it), so that FromContext
// finds it without another context.WithValue.
var ContextKey any = contextKey{}

// NewContext returns ctx carrying r.
func NewContext(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, contextKey{}, r)
}

// FromContext returns the edge's request in ctx, if any: when there is
// none (a face served on its own, in tests or over stdio) the caller applies
// its own checks.
func FromContext(ctx context.Context) (*Request, bool) {
	r, ok := ctx.Value(contextKey{}).(*Request)
	return r, ok && r != nil
}

// Begin runs the edge on r and fills er (the caller's, so that it can
// live inside a context value it allocates anyway). It reports false when it
// answered w itself: a Host or Origin refusal (403), a body too large (413)
// or unreadable (400), a refused credential (identity.Error's status) or a
// resolver failure (500). It deletes untrusted proxy and identity headers
// from r.Header; for POST it leaves r.Body drained (set it from er.Body).
func (e *Edge) Begin(w http.ResponseWriter, r *http.Request, er *Request) bool {
	if !e.guard(w, r, er) {
		return false
	}
	if r.Method == http.MethodPost {
		b, err := readBody(w, r, e.live.Load().MaxBodyBytes)
		if err != nil {
			var mbe *http.MaxBytesError
			// JSON-RPC bodies, as every other refusal of a client's input.
			if errors.As(err, &mbe) {
				mcpio.WriteRPCErrorRaw(w, http.StatusRequestEntityTooLarge, json.RawMessage("null"), rpc.Errorf(rpc.CodeInvalidRequest,
					"Invalid Request: the body is larger than this bridge's limit of %d bytes (--max-body-bytes); send a smaller request", mbe.Limit))
				return false
			}
			mcpio.WriteRPCErrorRaw(w, http.StatusBadRequest, json.RawMessage("null"), rpc.Errorf(rpc.CodeParseError,
				"Parse error: the body could not be read to its end; send the request again"))
			return false
		}
		er.Body = b
	}
	return e.resolve(w, r, er)
}

// Guard wraps next (an endpoint beside /mcp, such as the OAuth metadata
// relay) in the Host, Origin and trusted-proxy policies and puts a Request
// without body or principal into its context (for PublicURL, which names
// the MCP endpoint whatever path the request had).
func (e *Edge) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		er := new(Request)
		if !e.guard(w, r, er) {
			return
		}
		next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), er)))
	})
}

// guard applies the Host/Origin and trusted-proxy policies.
func (e *Edge) guard(w http.ResponseWriter, r *http.Request, er *Request) bool {
	*er = Request{e: e, hdr: r.Header, host: r.Host, scheme: "http", path: e.cfg.EndpointPath}
	if r.TLS != nil {
		er.scheme = "https"
	}
	lv := e.live.Load()
	if ref := lv.Policy.Admit(r.Host, r.Header.Get("Origin"), loopbackListener(r)); ref != nil {
		e.log.Info("refused a request: its "+ref.Header+" header is not allowed", "header", ref.Header, "value", ref.Value, "peer", r.RemoteAddr)
		http.Error(w, ref.Error(), http.StatusForbidden)
		return false
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		er.Peer = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		for _, p := range lv.TrustedProxies {
			if p.Contains(er.Peer.Addr()) {
				er.Trusted = true
				break
			}
		}
	}
	h := r.Header
	if !er.Trusted {
		for _, k := range proxyHeaders {
			delete(h, k)
		}
		for _, k := range e.cfg.IdentityHeaders {
			delete(h, k)
		}
		return true
	}
	// A trusted proxy's view of the client.
	er.xffPrior = strings.Join(h["X-Forwarded-For"], ", ")
	fproto, fhost := forwarded(h.Get("Forwarded"))
	if v := firstElem(h.Get("X-Forwarded-Proto")); v != "" {
		fproto = v
	}
	if v := firstElem(h.Get("X-Forwarded-Host")); v != "" {
		fhost = v
	}
	if fproto = strings.ToLower(fproto); fproto == "http" || fproto == "https" {
		er.scheme = fproto
	}
	if fhost != "" {
		er.host = fhost
	}
	return true
}

// forwarded reads proto and host of the first (client-side) element of a
// Forwarded header (RFC 7239 §4).
func forwarded(v string) (proto, host string) {
	if v == "" {
		return "", ""
	}
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	for _, pair := range strings.Split(v, ";") {
		k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			continue
		}
		val = strings.Trim(val, `"`)
		switch strings.ToLower(k) {
		case "proto":
			proto = val
		case "host":
			host = val
		}
	}
	return proto, host
}

// resolve decides the principal.
func (e *Edge) resolve(w http.ResponseWriter, r *http.Request, er *Request) bool {
	if e.defaultAuth {
		// The default mode inline: no audience, nothing to refuse.
		a := r.Header.Get("Authorization")
		er.Principal = identity.Principal{Credential: a}
		if a != "" {
			er.Principal, _ = identity.AuthorizationHeader{}.Resolve(r.Context(), identity.Request{Header: r.Header})
		}
		return true
	}
	p, err := e.cfg.Resolver.Resolve(r.Context(), identity.Request{Header: r.Header, TLS: r.TLS, TrustedPeer: er.Trusted, Audience: er.PublicURL()})
	if err == nil {
		er.Principal = p
		return true
	}
	var ie *identity.Error
	if !errors.As(err, &ie) {
		e.log.Warn("cannot decide a request's principal; answering 500", "err", err)
		e.writeError(w, er, http.StatusInternalServerError, rpc.Errorf(rpc.CodeInternalError, "Internal error: the bridge cannot check this request's credentials right now"))
		return false
	}
	e.challengeResponse(w, er, ie)
	return false
}

// challengeResponse answers a refused credential: ie.Status, a Bearer challenge
// (RFC 6750 §3) with error, error_description and resource_metadata (RFC
// 9728 §5.1) pointing at the bridge's metadata for er's public URL,
// Retry-After on 503, and a JSON-RPC error body with the request's id when
// it is known.
func (e *Edge) challengeResponse(w http.ResponseWriter, er *Request, ie *identity.Error) {
	status := ie.Status
	if status == 0 {
		status = http.StatusUnauthorized
	}
	e.log.Info("refused a request's credentials", "status", status, "error", ie.Code, "reason", ie.Description, "peer", er.Peer.String())
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden: // RFC 6750 §3.1's three
		w.Header().Set("WWW-Authenticate", e.challenge(er, ie))
	}
	if status == http.StatusServiceUnavailable {
		secs := int64(math.Ceil(ie.RetryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
	}
	msg := http.StatusText(status)
	if ie.Description != "" {
		msg += ": " + ie.Description
	}
	e.writeError(w, er, status, rpc.Errorf(rpc.CodeInvalidRequest, "%s", msg))
}

func (e *Edge) challenge(er *Request, ie *identity.Error) string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	param := func(k, v string) {
		b.WriteString(sep)
		b.WriteString(k)
		b.WriteString(`="`)
		b.WriteString(quote(v))
		b.WriteString(`"`)
		sep = ", "
	}
	if ie.Code != "" {
		param("error", ie.Code)
		if ie.Description != "" {
			param("error_description", ie.Description)
		}
	}
	if e.cfg.MetadataURL != nil {
		if u := e.cfg.MetadataURL(er.PublicURL()); u != "" {
			param("resource_metadata", u)
		}
	}
	return b.String()
}

// quote escapes a quoted-string's content (RFC 9110 §5.6.4); control
// characters become spaces.
func quote(s string) string {
	if !strings.ContainsAny(s, "\"\\") && !hasCtl(s) {
		return s
	}
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20 || c == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func hasCtl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

func (e *Edge) writeError(w http.ResponseWriter, er *Request, status int, re *rpc.Error) {
	id := json.RawMessage("null")
	if m, err := er.Message(); err == nil {
		if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
			if b, err := json.Marshal(req.ID.Raw()); err == nil {
				id = b
			}
		}
	}
	mcpio.WriteRPCErrorRaw(w, status, id, re)
}

// firstElem is the first comma-separated element of a header value (the
// client-side end of a proxy chain).
func firstElem(v string) string {
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// loopbackListener reports whether r arrived on a loopback address.
func loopbackListener(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return false
	}
	if ta, ok := la.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback() // without formatting the address
	}
	host, _, err := net.SplitHostPort(la.String())
	return err == nil && httpguard.IsLoopbackHost(host)
}

// readBody reads a POST body whole: into one buffer of its declared length
// when it has one within limit (what clients send), else through
// http.MaxBytesReader (chunked bodies, and the 413 of one too large).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n <= limit {
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
}
