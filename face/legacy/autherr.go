package legacyface

import (
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
)

// An upstream call made for one client request that the upstream refused
// with 401 or 403 is answered with that refusal — the same status, the
// upstream's challenges pointing at the bridge's protected resource
// metadata (RFC 6750 §3, RFC 9728 §5.1) — never with HTTP 200 and a
// JSON-RPC error: the status is what starts an OAuth client's flow. Once a
// response has started (an event stream of a long wait) only a JSON-RPC
// error can go out; the upstream error's message names the authorization
// plainly (upstream/legacy, upstream/modern).

// relayAuth is edge.RelayAuthError on a lean response that has not started: it
// reports false (the caller sends the JSON-RPC error) once the response is
// an event stream or answered.
func (o *leanOut) relayAuth(r *http.Request, id jsonrpc.ID, err error) bool {
	o.mu.Lock() // taken on error paths only; edge.RelayAuthError tells a refusal apart
	defer o.mu.Unlock()
	if o.done || o.sse || !edge.RelayAuthError(o.w, r, err, id) {
		return false
	}
	o.done = true
	return true
}

// refusalBox holds a request's upstream refusal (set by its handler, read
// by its writer).
type refusalBox struct {
	p atomic.Pointer[oauthmeta.UpstreamAuthError]
}

func (b *refusalBox) Store(e *oauthmeta.UpstreamAuthError) { b.p.Store(e) }
func (b *refusalBox) Load() *oauthmeta.UpstreamAuthError   { return b.p.Load() }

// noteRefusal keeps the upstream refusal err carries for the go-sdk path's
// writer (refusalWriter), which relays it instead of go-sdk's answer.
func (ri *reqInfo) noteRefusal(err error) {
	if ae, ok := oauthmeta.AsUpstreamAuthError(err); ok && ri != nil {
		ri.refusal.Store(ae)
	}
}

// sdkGuard is go-sdk's HTTP handler with the relay in front of its writes:
// a request the bridge recorded (hdrNonce) whose handler failed with an
// upstream refusal gets the refusal instead of go-sdk's HTTP 200 answer.
type sdkGuard struct {
	b    *Bridge
	next http.Handler
}

func (g sdkGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if v, ok := g.b.reqs.Load(r.Header.Get(hdrNonce)); ok {
			ri := v.(*reqInfo)
			w = &mcpio.RefusalWriter{ResponseWriter: w, Refusal: ri.refusal.Load,
				Relay: func(w http.ResponseWriter, e *oauthmeta.UpstreamAuthError, id jsonrpc.ID) {
					edge.RelayAuthError(w, r, e, id)
				}}
		}
	}
	g.next.ServeHTTP(w, r)
}

// ResponseStarted reports whether a keep-alive committed the response
// (mcpio.ResponseStarter): a started response is never replaced.
func (s *streamWriter) ResponseStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wrote
}
