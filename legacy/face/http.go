package face

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/httpguard"
	"github.com/tasksbridge/tasksbridge/legacy"
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
	if !b.cfg.DisableHostCheck && !httpguard.HostAllowed(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	// This listener also honours "*" and same-host origins (M-43).
	policy := httpguard.OriginPolicy{Allowed: b.cfg.AllowedOrigins, Wildcard: true, SameHost: true}
	if !httpguard.OriginAllowed(r.Header.Get("Origin"), r.Host, policy) {
		http.Error(w, "Forbidden: invalid Origin header", http.StatusForbidden)
		return
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

func principalOf(r *http.Request) string {
	return sessionmap.PrincipalFromAuthorization(r.Header.Get("Authorization"))
}

func (b *Bridge) servePOST(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, b.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "Bad Request: cannot read the body", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))

	// One message per POST from 2025-06-18 on; batches (2025-03-26) go to
	// go-sdk as they are, without a request record.
	var req *jsonrpc.Request
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		req, _ = msg.(*jsonrpc.Request)
	} else if t := bytes.TrimSpace(body); !json.Valid(t) {
		writeRPCError(w, http.StatusBadRequest, nil, rpc.Errorf(rpc.CodeParseError, "Parse error: the body is not JSON"))
		return
	}

	sid := r.Header.Get(hdrSessionID)
	principal := principalOf(r)
	ctx := r.Context()
	if sid == "" {
		if req == nil || req.Method != legacy.MethodInitialize {
			writeRPCError(w, http.StatusBadRequest, req, rpc.Errorf(rpc.CodeInvalidRequest,
				"Bad Request: no Mcp-Session-Id header; send initialize first"))
			return
		}
		s := b.newSession(randomID(), principal, transportHTTP)
		srv := b.newServer(s)
		s.mu.Lock()
		s.srv = srv
		s.mu.Unlock()
		ctx = context.WithValue(ctx, serverKey{}, srv)
	} else {
		s, status := b.resolveSession(r, sid, principal)
		if s == nil {
			http.Error(w, statusText(status)+": session not found", status)
			return
		}
		if _, err := b.store.TouchSession(ctx, s.scope(), nil); err != nil && !errors.Is(err, sessionmap.ErrNotFound) {
			b.log.Warn("face: cannot touch session", "err", err)
		}
	}
	r = r.WithContext(ctx)
	if req == nil || !req.IsCall() {
		b.sdk.ServeHTTP(w, r)
		return
	}

	ri := &reqInfo{method: req.Method, raw: req.Params, authz: r.Header.Get("Authorization"), done: make(chan struct{})}
	nonce := b.nonceSeed + "." + randomID()
	b.reqs.Store(nonce, ri)
	defer func() {
		b.reqs.Delete(nonce)
		ri.finish()
	}()
	r.Header.Set(hdrNonce, nonce)

	switch req.Method {
	case legacy.MethodTasksGet, legacy.MethodTasksList, legacy.MethodTasksCancel, legacy.MethodPing:
		jw := newJSONWriter(w)
		b.sdk.ServeHTTP(jw, r)
		jw.finish()
	case legacy.MethodTasksResult, legacy.MethodToolsCall, "prompts/get", "resources/read":
		sw := newStreamWriter(w)
		ri.stream = sw
		b.inflight.add()
		defer b.inflight.done()
		stop := b.keepAlives(sw)
		b.sdk.ServeHTTP(sw, r)
		stop()
		sw.close()
	default:
		b.sdk.ServeHTTP(w, r)
	}
}

// keepAlives writes SSE comments on sw every Config.KeepAlive until stop.
func (b *Bridge) keepAlives(sw *streamWriter) (stop func()) {
	if b.cfg.KeepAlive <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(b.cfg.KeepAlive)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				sw.keepAlive()
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

func (b *Bridge) serveGET(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(hdrSessionID)
	if sid == "" {
		http.Error(w, "Bad Request: GET requires an Mcp-Session-Id header", http.StatusBadRequest)
		return
	}
	s, status := b.resolveSession(r, sid, principalOf(r))
	if s == nil {
		http.Error(w, statusText(status)+": session not found", status)
		return
	}
	sw := newStreamWriter(w)
	s.setGETStream(sw)
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
	live := b.liveSession(sid)
	if live != nil && live.principal != principal {
		live = nil
	}
	if live == nil {
		if _, err := b.store.GetSession(r.Context(), sc); err != nil {
			http.Error(w, "Not Found: session not found", http.StatusNotFound)
			return
		}
	}
	if live != nil {
		dw := newDiscardWriter()
		b.sdk.ServeHTTP(dw, r)
		live.close()
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

// resolveSession finds the live session sid for principal, rehydrating it
// from the store after a restart (issue 4 item 9). A session of another
// principal is reported like an unknown one (404).
func (b *Bridge) resolveSession(r *http.Request, sid, principal string) (*session, int) {
	if s := b.liveSession(sid); s != nil {
		if s.principal != principal {
			return nil, http.StatusNotFound
		}
		return s, http.StatusOK
	}
	s, err := b.rehydrate(r, sid, principal)
	if err != nil {
		if errors.Is(err, sessionmap.ErrNotFound) {
			return nil, http.StatusNotFound
		}
		b.log.Warn("face: cannot rehydrate session", "err", err)
		return nil, http.StatusInternalServerError
	}
	return s, http.StatusOK
}

// rehydrate rebuilds the go-sdk session sid from the store: a fresh server
// whose GetSessionID returns sid gets the stored initialize, then
// notifications/initialized and the stored log level, through go-sdk's own
// handler, exactly as the client once sent them (see the package doc).
func (b *Bridge) rehydrate(r *http.Request, sid, principal string) (*session, error) {
	b.mu.Lock()
	lk := b.rehydrates[sid]
	if lk == nil {
		lk = &sync.Mutex{}
		b.rehydrates[sid] = lk
	}
	b.mu.Unlock()
	lk.Lock()
	defer func() {
		lk.Unlock()
		b.mu.Lock()
		if b.rehydrates[sid] == lk {
			delete(b.rehydrates, sid)
		}
		b.mu.Unlock()
	}()
	if s := b.liveSession(sid); s != nil {
		if s.principal != principal {
			return nil, sessionmap.ErrNotFound
		}
		return s, nil
	}
	rec, err := b.store.GetSession(r.Context(), sessionmap.Scope{Principal: principal, Session: sid})
	if err != nil {
		return nil, err
	}
	if rec.Era != sessionmap.EraLegacy || len(rec.InitializeParams) == 0 {
		return nil, sessionmap.ErrNotFound
	}

	s := b.newSession(sid, principal, transportHTTP)
	s.initParams = rec.InitializeParams
	s.logLevel = rec.LogLevel
	s.rehydrating = true
	srv := b.newServer(s)
	s.srv = srv

	replay := func(sessionHeader bool, body []byte) (int, error) {
		ctx := r.Context()
		if !sessionHeader {
			ctx = context.WithValue(ctx, serverKey{}, srv)
		}
		q := r.Clone(ctx)
		q.Method = http.MethodPost
		q.Header = http.Header{}
		q.Header.Set("Content-Type", "application/json")
		q.Header.Set("Accept", "application/json, text/event-stream")
		if a := r.Header.Get("Authorization"); a != "" {
			q.Header.Set("Authorization", a)
		}
		if sessionHeader {
			q.Header.Set(hdrSessionID, sid)
			q.Header.Set(hdrProtocolVersion, rec.ProtocolVersion)
		}
		q.Body = io.NopCloser(bytes.NewReader(body))
		q.ContentLength = int64(len(body))
		dw := newDiscardWriter()
		b.sdk.ServeHTTP(dw, q)
		return dw.status(), nil
	}
	initReq, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": "tasksbridge-rehydrate-1", "method": legacy.MethodInitialize,
		"params": json.RawMessage(rec.InitializeParams),
	})
	if err != nil {
		return nil, fmt.Errorf("face: rehydrate: %w", err)
	}
	if code, _ := replay(false, initReq); code != http.StatusOK || s.serverSession() == nil {
		return nil, fmt.Errorf("face: rehydrate: replayed initialize answered %d", code)
	}
	if code, _ := replay(true, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); code != http.StatusAccepted {
		s.close()
		return nil, fmt.Errorf("face: rehydrate: replayed notifications/initialized answered %d", code)
	}
	if rec.LogLevel != "" {
		lvl, _ := json.Marshal(rec.LogLevel)
		body := []byte(`{"jsonrpc":"2.0","id":"tasksbridge-rehydrate-2","method":"logging/setLevel","params":{"level":` + string(lvl) + `}}`)
		if code, _ := replay(true, body); code != http.StatusOK {
			s.close()
			return nil, fmt.Errorf("face: rehydrate: replayed logging/setLevel answered %d", code)
		}
	}
	b.register(s)
	s.mu.Lock()
	s.rehydrating = false
	s.mu.Unlock()
	b.log.Debug("face: session rehydrated", "session", sid)
	return s, nil
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
