package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"sync"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

const hdrSessionID = "Mcp-Session-Id"

// hdrProtocolVersion is MCP-Protocol-Version in Go's canonical form, so that
// reading it on every request does not allocate a canonicalised copy.
var hdrProtocolVersion = http.CanonicalHeaderKey(modern.HeaderProtocolVersion)

// eraLabel is an era as a metric label value.
func eraLabel(e era.Era) string {
	switch e {
	case era.Legacy:
		return metrics.EraLegacy
	case era.Modern:
		return metrics.EraModern
	}
	return metrics.EraUnknown
}

// clientEra decides which era a client request speaks: era.Client's rule
// on the request's headers and the body as the router read it (cm, nil for
// a bodiless request), where a session id counts as legacy when it names a
// legacy session this bridge knows for principal (the edge's).
func (s *Server) clientEra(r *http.Request, cm *clientMsg, principal string) era.Era {
	sid := r.Header.Get(hdrSessionID)
	req := era.Request{
		Version:            r.Header.Get(hdrProtocolVersion),
		SessionID:          sid,
		Body:               era.Signals{Body: era.BodyEmpty},
		KnownLegacySession: func() bool { return s.knownLegacySession(r, sid, principal) },
	}
	if cm != nil {
		req.Body = cm.era // the body as the router read it, once
	}
	return era.Client(req)
}

func (s *Server) knownLegacySession(r *http.Request, sid, principal string) bool {
	if info, ok := s.meter.sessions.get(sid); ok {
		return !info.missing
	}
	_, ok := s.storedSession(r, sid, principal)
	return ok
}

// storedSession reads a legacy face session's clientInfo from the store
// (sessions that started before a restart) and remembers it, or that there
// is none (so a stale id does not cost a store read per request).
func (s *Server) storedSession(r *http.Request, sid, principal string) (implView, bool) {
	if len(sid) > sessionmap.MaxIDLen {
		return implView{}, false
	}
	rec, err := s.store.GetSession(r.Context(), sessionmap.Scope{Principal: principal, Session: sid})
	if err != nil || rec.Era != era.Legacy {
		if errors.Is(err, sessionmap.ErrNotFound) || err == nil {
			s.meter.sessions.put(sid, implView{missing: true})
		}
		return implView{}, false
	}
	info := clientInfoOf(rec.InitializeParams)
	s.meter.sessions.put(sid, info)
	return info, true
}

// serveMCP is the /mcp endpoint: it reads the body once, decides the
// client's era and the upstream's, and hands the request to one of the four
// paths, metering it on the way.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		s.refuseDraining(w, r) // drain.go
		return
	}
	// One allocation carries the edge's request to every path: the
	// passthrough's context value is this same struct (passCtx).
	pc := new(passCtx)
	er := &pc.edge
	if !s.edge.Begin(w, r, er) {
		return // refused (Host, Origin, body, credentials): answered
	}
	var cm *clientMsg
	if r.Method == http.MethodPost {
		b := er.Body
		cm = readClientMsg(b)
		br := new(bodyReader)
		br.Reset(b)
		r.Body = br
		r.ContentLength = int64(len(b))
	}

	clientEra := s.clientEra(r, cm, er.Principal.ID)
	upEra, eraErr := s.upstreamEra(r.Context(), er.Principal.Credential)
	ce, ue := eraLabel(clientEra), eraLabel(upEra)
	sid := ""
	if clientEra == era.Legacy {
		sid = r.Header.Get(hdrSessionID)
	}

	// One allocation carries the request's metering (its exchange, the
	// writer that observes the answer, what ending it records) through the
	// handler and, for a parked wait, until the answer.
	hc := &httpCall{s: s, sid: sid, isDelete: r.Method == http.MethodDelete}
	var ex *exchange
	onMsg := func([]byte) {}
	switch {
	case r.Method == http.MethodPost:
		ex = s.meter.requestInto(&hc.ex, ce, ue, sid, cm, func() implView {
			if sid == "" {
				return implView{}
			}
			if info, ok := s.meter.sessions.get(sid); ok {
				return info // empty when missing: "unknown"
			}
			info, _ := s.storedSession(r, sid, er.Principal.ID)
			return info
		})
		if ex != nil {
			onMsg = ex.message
		}
	case r.Method == http.MethodGet && clientEra == era.Legacy:
		onMsg = func(b []byte) { s.meter.serverMessage(ce, sid, b) }
	}
	hc.metered = ex != nil
	sw := &hc.sw
	// A legacy wait that parks takes the connection over and ends the
	// response after this handler returned (sniffWriter.DetachResponse):
	// the call then records it, its exchange keeping only what metering
	// the answer reads (method, id, eras, client, start), not the decoded
	// message and its body.
	sw.w, sw.onMsg, sw.call = w, onMsg, hc
	if ex != nil {
		ex.anyID = true
		// Record the request as soon as its answer is seen, before the
		// client can read it (so a client that scrapes /metrics next sees
		// its own request); the deferred end covers requests that end
		// without an answer.
		ex.call = hc
	}
	defer func() {
		if !sw.detached.Load() {
			hc.end(r.Context().Err() != nil)
		}
	}()

	if r.Method == http.MethodPost {
		// Malformed messages and unknown methods are answered here, the same
		// way on every path (validate.go).
		v := checkBody(cm, bodyRouteFor(clientEra, upEra, eraErr), clientEra)
		switch {
		case v.accept:
			sw.WriteHeader(http.StatusAccepted)
			return
		case v.err != nil:
			writeRPCErrorID(sw, errorStatus(clientEra, v), v.id, v.err)
			return
		}
	}
	// The edge's context carries the relay, which learns the refusal's
	// resource_metadata (RFC 9728 §5.1) so the bridge's metadata serves the
	// document the upstream named, not only the well-known one.
	if eraErr != nil && s.relayEraRefusal(sw, r.WithContext(edge.NewContext(r.Context(), er)), ex, eraErr) {
		return
	}
	if eraErr != nil {
		ex.force(metrics.OutcomeUpstreamUnavailable)
		w.Header().Set("Retry-After", "1")
		writeRPCError(sw, http.StatusServiceUnavailable, ex, rpc.Errorf(rpc.CodeInternalError,
			"upstream %s is unreachable: cannot determine its protocol era: %v", s.target, eraErr))
		return
	}
	switch {
	case clientEra == era.Legacy && upEra == era.Modern:
		s.legacy.Handler().ServeHTTP(sw, r.WithContext(edge.NewContext(r.Context(), er)))
	case clientEra == era.Modern && upEra == era.Legacy:
		s.modernF.ServeHTTP(sw, r.WithContext(edge.NewContext(r.Context(), er)))
	default:
		sw.ex = ex
		s.passthrough(sw, r, clientEra, ex, pc)
	}
}

// httpCall is one /mcp request's metering: its exchange (unless the meter
// does not follow the request: metered), the writer that observes its
// answer, and what ending it records. One allocation of 352 bytes, where
// the handler's writer, exchange and closures were six of about 500: a
// parked wait keeps it until its answer.
type httpCall struct {
	s        *Server
	ex       exchange
	sw       sniffWriter
	sid      string // the legacy session id ("" otherwise)
	metered  bool   // ex is the request's exchange
	isDelete bool   // an HTTP DELETE (the session's end)
}

// exchange is the request's exchange, or nil when it is not metered
// (exchange's methods are nil-safe).
func (c *httpCall) exchange() *exchange {
	if !c.metered {
		return nil
	}
	return &c.ex
}

// answered records the exchange once its answer has been observed.
func (c *httpCall) answered() { c.exchange().finish(c.sw.Status(), false, false) }

// finished runs once the exchange is recorded: an initialize answered
// with a session id makes the session's clientInfo known.
func (c *httpCall) finished() {
	ex := c.exchange()
	if ex == nil || ex.method != "initialize" {
		return
	}
	if id := c.sw.Header().Get(hdrSessionID); id != "" && ex.ok() {
		c.s.meter.sessions.put(id, ex.client)
	}
}

// end records the request when its response is over (cancelled: the
// client went away): when the handler returns, or when a parked wait's
// response ends.
func (c *httpCall) end(cancelled bool) {
	status, overflow := c.sw.finish()
	ex := c.exchange()
	ex.settleUpstream(true)
	ex.finish(status, overflow, cancelled)
	if c.isDelete && status >= 200 && status < 300 && c.sid != "" {
		c.s.meter.sessions.take(c.sid)
	}
}

// passthrough forwards a same-era request to the upstream with minimal
// touching: an httputil.ReverseProxy that streams SSE unbuffered, drops
// hop-by-hop headers and passes everything else (Mcp-Session-Id,
// Authorization, MCP-Protocol-Version, Mcp-* routing headers) both ways.
// Host, Origin, trusted-proxy headers and credentials were settled at the
// edge (serveMCP); ctx is the struct that already carries the edge request.
func (s *Server) passthrough(w http.ResponseWriter, r *http.Request, clientEra era.Era, ex *exchange, ctx *passCtx) {
	if s.proxy == nil {
		ex.force(metrics.OutcomeInternal)
		writeRPCError(w, http.StatusNotImplemented, ex, rpc.Errorf(rpc.CodeInternalError,
			"this bridge's upstream is a stdio command (%s): %s clients of a %s upstream need no translation and are "+
				"passed through only to an HTTP upstream; connect this client to the upstream directly",
			s.target, eraLabel(clientEra), eraLabel(clientEra)))
		return
	}
	if clientEra == era.Modern && ex != nil && ex.method != "" {
		if e := checkModernVersion(r.Header, ex.params); e != nil {
			writeRPCError(w, http.StatusBadRequest, ex, e)
			return
		}
	}
	cctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ctx.Context, ctx.pass = cctx, passCall{ex: ex}
	if ex != nil && ex.method != "" {
		ctx.pass.pc = peekedCall{method: ex.method, id: ex.id, call: true}
	}
	stopHard := context.AfterFunc(s.hard, cancel)
	defer stopHard()
	if r.Method == http.MethodGet || (ex != nil && ex.method == modern.MethodSubscriptionsListen) {
		stopStreams := context.AfterFunc(s.streams, cancel)
		defer stopStreams()
	}
	s.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// passCtx carries a passthrough request's passCall to the upstream meter
// (ctxPassthrough) and its edge request (edge.ContextKey, for the proxy's
// Rewrite and ModifyResponse): one allocation where context.WithValue and
// the values would be four. Everything else is the embedded context's.
type passCtx struct {
	context.Context
	pass passCall
	edge edge.Request
}

func (c *passCtx) Value(key any) any {
	switch key {
	case any(ctxPassthrough):
		return &c.pass
	case edge.ContextKey:
		return &c.edge
	}
	return c.Context.Value(key)
}

// bodyReader is the body read once, handed on to whichever path serves the
// request.
type bodyReader struct{ bytes.Reader }

func (*bodyReader) Close() error { return nil }

// newProxy builds the passthrough reverse proxy towards the HTTP upstream.
func (s *Server) newProxy(base http.RoundTripper) *httputil.ReverseProxy {
	target := *s.url
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// The upstream's own path and query replace the bridge's /mcp.
			out := pr.Out.URL
			out.Scheme, out.Host, out.Path, out.RawPath, out.RawQuery = target.Scheme, target.Host, target.Path, target.RawPath, target.RawQuery
			out.User = target.User
			pr.Out.Host = ""
			// X-Forwarded-* as SetXForwarded would, but believing only a
			// trusted proxy's chain (the edge deleted any other).
			if er, ok := edge.FromContext(pr.In.Context()); ok {
				er.SetForwarded(pr.Out.Header)
			}
		},
		ModifyResponse: modifyResponse,
		Transport:      &meterTransport{next: base, u: s.upMeter},
		FlushInterval:  -1, // SSE: every event as it comes
		BufferPool:     &copyBuffers,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var ex *exchange
			if pass, ok := r.Context().Value(ctxPassthrough).(*passCall); ok {
				ex = pass.ex
			}
			if r.Context().Err() != nil {
				// The client left, or the bridge is stopping.
				ex.force(metrics.OutcomeCancelled)
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			ex.force(metrics.OutcomeUpstreamUnavailable)
			s.log.Warn("passthrough: upstream unreachable", "upstream", s.target, "err", err)
			writeRPCError(w, http.StatusBadGateway, ex, rpc.Errorf(rpc.CodeInternalError,
				"upstream %s is unreachable: %v", s.target, err))
		},
	}
}

// copyBuffers are the passthrough's copy buffers (httputil.ReverseProxy
// allocates a fresh 32 KiB buffer per response without a pool).
var copyBuffers bufferPool

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if buf, ok := b.p.Get().(*[]byte); ok {
		return *buf
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }

// checkModernVersion refuses a modern request for a version the bridge does
// not serve with -32022 naming the versions it does (§3.3, M-38): the
// per-request _meta version, else the MCP-Protocol-Version header.
func checkModernVersion(h http.Header, p *paramsView) *rpc.Error {
	v := ""
	if p != nil {
		v = p.MetaProtocolVersion
	}
	if v == "" {
		v = h.Get(modern.HeaderProtocolVersion)
	}
	if v == "" || v == modern.ProtocolVersion {
		return nil
	}
	return modern.ErrUnsupportedProtocolVersion(v, SupportedVersions)
}

// bodyRouteFor is who answers a request of clientEra, so that checkBody
// judges methods and params only where the bridge answers them.
func bodyRouteFor(clientEra, upEra era.Era, eraErr error) bodyRoute {
	switch {
	case eraErr != nil:
		return routeUpstream // nothing is served now: only the message itself is judged
	case clientEra == era.Legacy && upEra == era.Modern:
		return routeLegacyFace
	case clientEra == era.Modern && upEra == era.Legacy:
		return routeModernFace
	}
	return routeUpstream
}

// writeRPCError answers a request the router refuses itself with a JSON-RPC
// error body.
func writeRPCError(w http.ResponseWriter, status int, ex *exchange, e *rpc.Error) {
	id := json.RawMessage("null")
	if ex != nil && ex.id != "" {
		id = json.RawMessage(ex.id)
	}
	writeRPCErrorID(w, status, id, e)
}

// writeRPCErrorID writes the error response for request id.
func writeRPCErrorID(w http.ResponseWriter, status int, id json.RawMessage, e *rpc.Error) {
	mcpio.WriteRPCErrorRaw(w, status, id, e)
}
