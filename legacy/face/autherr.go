package face

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/authstub"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// An upstream call made for one client request that the upstream refused
// with 401 or 403 is answered with that refusal — the same status, the
// upstream's challenges pointing at the bridge's protected resource
// metadata (RFC 6750 §3, RFC 9728 §5.1) — never with HTTP 200 and a
// JSON-RPC error: the status is what starts an OAuth client's flow. Once a
// response has started (an event stream of a long wait) only a JSON-RPC
// error can go out; the upstream error's message names the authorization
// plainly (legacy/upstream, modern/upstream).

// The stand-ins until the merge (see internal/authstub): writeAuthError is
// oauthmeta.WriteAuthError, metadataURL oauthmeta.MetadataURL, publicURL
// edge.FromContext(r.Context()).PublicURL.
var (
	writeAuthError = authstub.WriteAuthError
	metadataURL    = authstub.MetadataURL
	publicURL      = authstub.PublicURL
)

// relayAuthError answers request id on w with the upstream's refusal when
// err carries one, and reports whether it did. The caller makes sure the
// response has not started.
func relayAuthError(w http.ResponseWriter, r *http.Request, err error, id jsonrpc.ID) bool {
	e, ok := oauthmeta.AsUpstreamAuthError(err)
	if !ok || r == nil {
		return false
	}
	writeAuthError(w, e, metadataURL(publicURL(r)), id)
	return true
}

// relayAuth is relayAuthError on a lean response that has not started: it
// reports false (the caller sends the JSON-RPC error) once the response is
// an event stream or answered.
func (o *leanOut) relayAuth(r *http.Request, id jsonrpc.ID, err error) bool {
	if _, ok := oauthmeta.AsUpstreamAuthError(err); !ok {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done || o.sse {
		return false
	}
	if !relayAuthError(o.w, r, err, id) {
		return false
	}
	o.done = true
	return true
}

// authFailure is a face error for an upstream refusal: the JSON-RPC error a
// started response carries, with the refusal kept in the chain for
// relayAuthError.
type authFailure struct {
	rpc  *rpc.Error
	auth *oauthmeta.UpstreamAuthError
}

func (e *authFailure) Error() string   { return e.rpc.Message }
func (e *authFailure) Unwrap() []error { return []error{e.rpc, e.auth} }

// keepRefusal returns e, carrying cause's upstream refusal when it has one.
func keepRefusal(e *rpc.Error, cause error) error {
	if ae, ok := oauthmeta.AsUpstreamAuthError(cause); ok {
		return &authFailure{rpc: e, auth: ae}
	}
	return e
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
			w = &refusalWriter{ResponseWriter: w, ri: v.(*reqInfo), r: r}
		}
	}
	g.next.ServeHTTP(w, r)
}

// refusalWriter holds go-sdk's status back until its first write: when that
// write is the answer to a request whose handler noted a refusal, the
// refusal goes out instead (with the answer's id) and go-sdk's bytes are
// dropped.
type refusalWriter struct {
	http.ResponseWriter
	ri *reqInfo
	r  *http.Request

	mu      sync.Mutex
	code    int  // held-back status (0: none yet)
	decided bool // the response is go-sdk's, or the relay
	relayed bool
}

// started is implemented by the face's writers that can commit a response
// on their own (streamWriter's keep-alives).
type started interface{ started() bool }

func (s *streamWriter) started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wrote
}

func (w *refusalWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.decided {
		if !w.relayed {
			w.ResponseWriter.WriteHeader(code)
		}
		return
	}
	if w.code == 0 {
		w.code = code
	}
}

func (w *refusalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.decided {
		w.decideLocked(p)
	}
	if w.relayed {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// decideLocked relays the refusal when p is go-sdk's answer and nothing
// went out yet; otherwise it lets the held-back status through.
func (w *refusalWriter) decideLocked(p []byte) {
	w.decided = true
	e := w.ri.refusal.Load()
	st, ok := w.ResponseWriter.(started)
	if e != nil && !(ok && st.started()) {
		if id, isAnswer := answerID(w.Header().Get("Content-Type"), p); isAnswer {
			writeAuthError(w.ResponseWriter, e, metadataURL(publicURL(w.r)), id)
			w.relayed = true
			return
		}
	}
	if w.code != 0 {
		w.ResponseWriter.WriteHeader(w.code)
	}
}

func (w *refusalWriter) FlushError() error {
	w.mu.Lock()
	if !w.decided && w.code != 0 {
		// A flush commits: whatever was held back goes out as it is.
		w.decided = true
		w.ResponseWriter.WriteHeader(w.code)
	}
	relayed := w.relayed
	w.mu.Unlock()
	if relayed {
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *refusalWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the real writer's deadlines.
func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// answerID reads the id of the JSON-RPC response in one go-sdk write (an
// application/json body or one SSE event).
func answerID(contentType string, p []byte) (jsonrpc.ID, bool) {
	msg := p
	if strings.HasPrefix(contentType, "text/event-stream") {
		msgs := sseMessages(p)
		if len(msgs) != 1 {
			return jsonrpc.ID{}, false
		}
		msg = msgs[0]
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || len(m.Error) == 0 {
		return jsonrpc.ID{}, false
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil
}
