package modernface

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/httpguard"
	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// MaxBody bounds a request body (HTTP 413 above it).
const MaxBody = 4 << 20

// bodyWords answer a body the face cannot take when no edge read it.
var bodyWords = mcpio.BodyWords{
	TooLarge:   "request body exceeds %d bytes",
	Unreadable: "cannot read the request body",
}

// Handler returns the face as the /mcp endpoint.
func (f *Face) Handler() http.Handler { return f }

// ServeHTTP serves one POST of a modern client: Origin and Host checks (403,
// M-43), credentials, the era and header rules, then the lean path (lean.go),
// the face's own task listen stream, or go-sdk for what the lean path leaves
// to it.
func (f *Face) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Accel-Buffering", "no") // M-43 SHOULD
	// The composition root (router) serves the face behind the
	// request edge: Host, Origin, body and principal settled once
	// (edge.FromContext). Served on its own (tests, embedding) the face
	// applies the same checks itself.
	er, fromEdge := edge.FromContext(r.Context())
	authz := r.Header.Get("Authorization")
	principal := ""
	if fromEdge {
		authz, principal = er.Principal.Credential, er.Principal.ID
	} else {
		if !httpguard.HostAllowed(r) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		// Strict M-43: only loopback and the listed origins (no "*", no same-host).
		if !httpguard.OriginAllowed(r.Header.Get("Origin"), r.Host, httpguard.OriginPolicy{Allowed: f.opts.AllowedOrigins}) {
			http.Error(w, "Forbidden: invalid Origin header", http.StatusForbidden)
			return
		}
		principal = sessionmap.PrincipalFromAuthorization(authz)
	}
	// Behind the edge "authenticated" is "has a principal" (a gateway's
	// header:NAME user has no Authorization header).
	if f.opts.RequireAuth && ((fromEdge && principal == "") || (!fromEdge && strings.TrimSpace(authz) == "")) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		http.Error(w, "Unauthorized: this endpoint requires an Authorization header (every task request is authenticated, M-65)", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodPost {
		// No GET stream and no sessions in 2026-07-28 (M-40).
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "Method Not Allowed: MCP 2026-07-28 uses POST only", http.StatusMethodNotAllowed)
		return
	}
	body, msg, ok, err := edge.ReadMessage(w, r, MaxBody, bodyWords)
	if !ok {
		return
	}
	if err != nil {
		code := rpc.CodeParseError
		var deep *rawjson.DepthError
		if errors.As(err, &deep) || json.Valid(body) { // too deep to read is not a parse error
			code = rpc.CodeInvalidRequest
		}
		mcpio.WriteRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, rpc.Errorf(code, "%s: %v", map[int64]string{rpc.CodeParseError: "Parse error", rpc.CodeInvalidRequest: "Invalid Request"}[code], err))
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		mcpio.WriteRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, rpc.Errorf(rpc.CodeInvalidRequest,
			"Invalid Request: a 2026-07-28 client sends no JSON-RPC responses (server→client requests were replaced by input_required results)"))
		return
	}
	if !req.IsCall() {
		if e := modern.CheckHeaders(r.Header.Get, body); e != nil && e.Code == rpc.CodeHeaderMismatch {
			mcpio.WriteRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, e)
			return
		}
		w.WriteHeader(http.StatusAccepted) // M-43: accepted notifications get 202
		return
	}
	params, split := splitParams(req.Params)
	meta, status, e := f.checkRequest(r.Header, body, req, params, split)
	if e != nil {
		mcpio.WriteRPCError(w, status, req.ID, e)
		return
	}
	if p, ok := mcpio.TaskListen(req); ok {
		f.serveListenHTTP(w, r, req, p, principal, authz)
		return
	}
	if servedMethod(req.Method) {
		if split && leanFit(r.Header, req.Method, req.Params, params) {
			f.serveLean(w, r, req, params, meta, principal, authz)
			return
		}
	}
	if e, status := mediaRefusal(r.Header); e != nil {
		mcpio.WriteRPCError(w, status, req.ID, e) // not go-sdk's plain text
		return
	}
	_, sdk, err := f.gosdk()
	if err != nil {
		mcpio.WriteRPCError(w, http.StatusInternalServerError, req.ID, rpc.Errorf(rpc.CodeInternalError, "%v", err))
		return
	}
	ctx := withReq(r.Context(), &reqInfo{principal: principal, authorization: authz, method: req.Method, params: req.Params})
	r = r.WithContext(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	sdk.ServeHTTP(w, r)
}

// checkRequest applies the era, per-request _meta and header rules to a
// request (order as the 2026-07-28 validation describes: version header,
// required _meta, header/body agreement, supported version, routing headers)
// and returns the request's decoded _meta.
func (f *Face) checkRequest(h http.Header, body []byte, req *jsonrpc.Request, params rawjson.Object, split bool) (modern.RequestMeta, int, *rpc.Error) {
	if req.Method == legacy.MethodInitialize {
		// A modern-only endpoint names its versions in the error it gives a
		// legacy initialize (M-44).
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return modern.RequestMeta{}, http.StatusBadRequest, modern.ErrUnsupportedProtocolVersion(p.ProtocolVersion, f.opts.SupportedVersions)
	}
	hv := h.Get(modern.HeaderProtocolVersion)
	if hv == "" {
		return modern.RequestMeta{}, http.StatusBadRequest, rpc.Errorf(rpc.CodeHeaderMismatch,
			"Header mismatch: the %s header is required (MCP 2026-07-28 sends it on every request)", modern.HeaderProtocolVersion)
	}
	meta, err := f.requestMeta(req.Params, params, split)
	if err != nil { // M-37
		return modern.RequestMeta{}, http.StatusBadRequest, rpc.As(err)
	}
	if meta.ProtocolVersion != hv {
		return meta, http.StatusBadRequest, modern.ErrHeaderMismatch(modern.HeaderProtocolVersion, hv, meta.ProtocolVersion)
	}
	if err := modern.CheckProtocolVersion(meta.ProtocolVersion, []string{modern.ProtocolVersion}); err != nil { // M-38
		return meta, http.StatusBadRequest, modern.ErrUnsupportedProtocolVersion(meta.ProtocolVersion, f.opts.SupportedVersions)
	}
	if !f.serves(req.Method) && req.Method != modern.MethodSubscriptionsListen {
		// M-42 (HTTP 404); the removed tasks/result and tasks/list get a
		// message saying what replaced them (M-34, M-66).
		return meta, http.StatusNotFound, modern.ErrMethodNotFound(req.Method)
	}
	if e := modern.CheckHeaders(h.Get, body); e != nil { // M-43, M-67
		if e.Code == rpc.CodeHeaderMismatch {
			return meta, http.StatusBadRequest, e
		}
		return meta, http.StatusBadRequest, e
	}
	// go-sdk compares Mcp-Name with the body itself and knows no base64.
	if v := h.Get(modern.HeaderName); v != "" {
		if d, err := modern.DecodeHeaderValue(v); err == nil {
			h.Set(modern.HeaderName, d)
		}
	}
	return meta, 0, nil
}

// serveListenHTTP serves subscriptions/listen for task ids as an SSE stream.
func (f *Face) serveListenHTTP(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, p modern.ListenParams, principal, authz string) {
	c := &call{method: req.Method, params: req.Params, principal: principal, authorization: authz}
	acked, rerr := f.checkListen(r.Context(), c, p)
	if rerr != nil {
		mcpio.WriteRPCError(w, http.StatusBadRequest, req.ID, rerr)
		return
	}
	send, ping := mcpio.OpenSSE(w)
	_ = f.runListen(r.Context(), c, req.ID, acked, send, ping)
}
