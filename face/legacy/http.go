package legacyface

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/httpguard"
	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

const (
	hdrSessionID       = "Mcp-Session-Id"
	hdrProtocolVersion = "MCP-Protocol-Version"
)

// serverKey carries the go-sdk server of a session being created through
// the request context to getServer.
type serverKey struct{}

// getServer is go-sdk's getServer hook: the per-session server of a request
// that creates a session, else the base server (go-sdk only reads its
// protocol versions then).
func (b *Bridge) getServer(r *http.Request) *mcp.Server {
	if s, ok := r.Context().Value(serverKey{}).(*mcp.Server); ok {
		return s
	}
	return b.base
}

// Handler returns the legacy Streamable HTTP endpoint (mount it at /mcp).
func (b *Bridge) Handler() http.Handler { return http.HandlerFunc(b.serveHTTP) }

func (b *Bridge) serveHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Accel-Buffering", "no") // keep reverse proxies from buffering SSE
	if _, ok := edge.FromContext(r.Context()); !ok {
		// Served on its own: the face's own checks (the edge's policy
		// otherwise, internal/edge.Policy).
		if !b.cfg.DisableHostCheck && !httpguard.HostAllowed(r) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		if !httpguard.OriginAllowed(r.Header.Get("Origin"), r.Host, httpguard.OriginPolicy{Allowed: b.cfg.AllowedOrigins}) {
			http.Error(w, "Forbidden: invalid Origin header", http.StatusForbidden)
			return
		}
	}
	if b.drain.Err() != nil {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Service Unavailable: the bridge is shutting down", http.StatusServiceUnavailable)
		return
	}
	r.Header.Del(hdrNonce) // only the bridge sets it
	switch r.Method {
	case http.MethodPost:
		b.servePOST(w, r)
	case http.MethodGet:
		b.serveGET(w, r)
	case http.MethodDelete:
		b.serveDELETE(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// bodyWords answer a body the face cannot take when no edge read it.
var bodyWords = mcpio.BodyWords{
	TooLarge:   "Request Entity Too Large: the body exceeds %d bytes",
	Unreadable: "Bad Request: cannot read the body",
}

func (b *Bridge) servePOST(w http.ResponseWriter, r *http.Request) {
	body, msg, ok, err := edge.ReadMessage(w, r, b.cfg.MaxBodyBytes, bodyWords)
	if !ok {
		return
	}
	// go-sdk reads the body again from memory.
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))

	// One message per POST from 2025-06-18 on; batches (2025-03-26) go to
	// go-sdk as they are, without a request record.
	var req *jsonrpc.Request
	var deep *rawjson.DepthError
	if err == nil {
		req, _ = msg.(*jsonrpc.Request)
	} else if errors.As(err, &deep) {
		// Too deep to read, JSON or not: never "not JSON".
		writeRPCError(w, http.StatusBadRequest, nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid Request: %v", deep))
		return
	} else if t := bytes.TrimSpace(body); !json.Valid(t) {
		writeRPCError(w, http.StatusBadRequest, nil, rpc.Errorf(rpc.CodeParseError, "Parse error: the body is not JSON"))
		return
	}

	sid := r.Header.Get(hdrSessionID)
	principal := principalOf(r)
	if sid == "" {
		if req == nil || req.Method != legacy.MethodInitialize {
			// The router sends here whatever carries no era of its own, a
			// 2026-07-28 request without its _meta version too: say what
			// each era must send (M-01 for the modern one).
			writeRPCError(w, http.StatusBadRequest, req, rpc.Errorf(rpc.CodeInvalidRequest,
				"Bad Request: the request has neither an Mcp-Session-Id header nor params._meta[%q]: "+
					"a %s client sends \"%s\" there on every request; a %s client opens a session with initialize "+
					"and sends its Mcp-Session-Id", modern.MetaKeyProtocolVersion, modern.ProtocolVersion, modern.ProtocolVersion, legacy.ProtocolVersion))
			return
		}
		if req.IsCall() {
			b.leanInitialize(w, r, req)
			return
		}
	}
	// As go-sdk's handler does: a version header the bridge does not know is
	// refused (the era router sends 2026-07-28 requests of a known legacy
	// session here too).
	if v := r.Header.Get(hdrProtocolVersion); v != "" && v != modern.ProtocolVersion && !slices.Contains(legacyVersions, v) {
		http.Error(w, fmt.Sprintf("Bad Request: unsupported protocol version %q (this endpoint speaks %s)", v, strings.Join(legacyVersions, ", ")), http.StatusBadRequest)
		return
	}
	s, status, release := b.resolveSession(r, sid, principal)
	if s == nil {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "5")
			writeRPCError(w, status, req, b.errTooManySessions())
			return
		}
		http.Error(w, statusText(status)+": session not found", status)
		return
	}
	defer func() {
		if release != nil {
			release()
		}
	}()
	if req != nil && req.Method == legacy.MethodInitialize && req.IsCall() {
		// A client's mistake, not the bridge's: answered here rather than
		// by go-sdk's session (-32603 and an ERROR line). The legacy rule
		// of the router: a request's JSON-RPC error comes with HTTP 200.
		writeRPCError(w, http.StatusOK, req, rpc.Errorf(rpc.CodeInvalidRequest,
			"Invalid Request: this session is already initialized; start a new session without Mcp-Session-Id to initialize again"))
		return
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && (b.deliverAnswer(s, resp, body) || b.answerStored(r, s, resp, body)) {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if req != nil && b.leanFor(s, req) {
		if b.serveLean(w, r, s, req, release) {
			release = nil // a parked wait holds the session until it ends (parked.go)
		}
		return
	}
	if err := b.materialize(r, s); err != nil {
		b.log.Warn("face: cannot give a session its go-sdk half", "err", err)
		http.Error(w, "Internal Server Error: cannot resume the session", http.StatusInternalServerError)
		return
	}
	if req == nil || !req.IsCall() {
		b.sdk.ServeHTTP(w, r)
		return
	}

	ri := httpReqInfo(r, s, req.Method, req.Params)
	nonce := b.nonceSeed + "." + randomID()
	b.reqs.Store(nonce, ri)
	defer func() {
		b.reqs.Delete(nonce)
		ri.finish()
	}()
	r.Header.Set(hdrNonce, nonce)

	// The task methods, tools/call and ping never get here: the lean path
	// (leanFor) serves every one of them.
	switch req.Method {
	case "prompts/get", "resources/read":
		sw := newStreamWriter(w)
		ri.stream = sw
		b.inflight.add()
		defer b.inflight.done()
		b.alive.add(sw)
		b.sdk.ServeHTTP(sw, r)
		b.alive.remove(sw)
		sw.close()
	default:
		b.sdk.ServeHTTP(w, r)
	}
}

func (b *Bridge) serveGET(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(hdrSessionID)
	if sid == "" {
		http.Error(w, "Bad Request: GET requires an Mcp-Session-Id header", http.StatusBadRequest)
		return
	}
	s, status, release := b.resolveSession(r, sid, principalOf(r))
	if s == nil {
		http.Error(w, statusText(status)+": session not found", status)
		return
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		if !b.serveResume(w, r, s, last, release) {
			release()
		}
		return
	}
	// A GET naming no stream may be a client that lost a resumed stream
	// before its first event id: it gets the answer owed to it
	// (resumeowed.go).
	if parked, served := b.serveOwed(w, r, s, release); served {
		if !parked {
			release()
		}
		return
	}
	defer release()
	if err := b.materialize(r, s); err != nil {
		b.log.Warn("face: cannot give a session its go-sdk half", "err", err)
		http.Error(w, "Internal Server Error: cannot resume the session", http.StatusInternalServerError)
		return
	}
	sw := newStreamWriter(w)
	sw.res = b.newListenStream(s)
	if !s.claimGETStream(sw) {
		b.serveSecondListen(w, r, s, sw)
		return
	}
	b.sdk.ServeHTTP(sw, r)
	s.clearGETStream(sw)
	sw.close()
}

func (b *Bridge) serveDELETE(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(hdrSessionID)
	if sid == "" {
		http.Error(w, "Bad Request: DELETE requires an Mcp-Session-Id header", http.StatusBadRequest)
		return
	}
	principal := principalOf(r)
	sc := sessionmap.Scope{Principal: principal, Session: sid}
	b.mu.Lock()
	live := b.sessions[sid]
	if live != nil && live.principal != principal {
		live = nil
	}
	p, k, wasDormant := b.dropDormantLocked(sid, principal)
	b.mu.Unlock()
	if wasDormant {
		b.endSession(b.dormantSession(k, p), false)
	}
	if live == nil {
		if _, err := b.store.GetSession(r.Context(), sc); err != nil {
			http.Error(w, "Not Found: session not found", http.StatusNotFound)
			return
		}
	}
	if live != nil {
		if live.serverSession() != nil {
			dw := newDiscardWriter()
			b.sdk.ServeHTTP(dw, r)
		}
		b.dropSession(live, false)
	}
	if err := b.store.DeleteSession(r.Context(), sc); err != nil && !errors.Is(err, sessionmap.ErrNotFound) {
		b.log.Warn("face: cannot delete session", "err", err)
	}
	if principal == "" {
		// Session-scoped tasks are unreachable once the session is gone.
		if _, err := b.store.DeleteSessionTasks(r.Context(), sc); err != nil {
			b.log.Warn("face: cannot delete session tasks", "err", err)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// writeRPCError answers a POST the bridge refuses itself with a JSON-RPC
// error body.
func writeRPCError(w http.ResponseWriter, status int, req *jsonrpc.Request, e *rpc.Error) {
	resp := map[string]any{"jsonrpc": "2.0", "error": e}
	if req != nil && req.ID.IsValid() {
		resp["id"] = req.ID.Raw()
	}
	b, err := json.Marshal(resp)
	if err != nil {
		http.Error(w, e.Message, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
