package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/httpguard"
	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// maxBody bounds a request body (go-sdk's default too).
const maxBody = 4 << 20

// Handler returns the MCP endpoint (mount it at /mcp). In front of go-sdk's
// stateless StreamableHTTPHandler it sets X-Accel-Buffering: no, rejects
// foreign Origin and non-loopback Host (403), enforces the modern era and
// the MCP-Protocol-Version / Mcp-Method / Mcp-Name headers (400 + -32020,
// M-43, M-67), binds the caller's principal, and serves task listens.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Accel-Buffering", "no") // M-43 SHOULD
	if !httpguard.HostAllowed(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	// Strict M-43: only loopback and the listed origins (no "*", no same-host).
	if !httpguard.OriginAllowed(r.Header.Get("Origin"), r.Host, httpguard.OriginPolicy{Allowed: s.opts.AllowedOrigins}) {
		http.Error(w, "Forbidden: invalid Origin header", http.StatusForbidden)
		return
	}
	if a := r.Header.Get("Authorization"); a != "" {
		// The principal is a digest: the secret itself is never kept.
		sum := sha256.Sum256([]byte(a))
		r = r.WithContext(context.WithValue(r.Context(), principalKey{}, hex.EncodeToString(sum[:])))
	}
	if r.Method != http.MethodPost {
		s.sdk.ServeHTTP(w, r) // 405 for GET/DELETE on a stateless server (M-43)
		return
	}
	body, ok := mcpio.ReadBody(w, r, maxBody, mcpio.BodyWords{
		TooLarge:   "request body exceeds %d bytes",
		Unreadable: "failed to read body",
	})
	if !ok {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		s.sdk.ServeHTTP(w, r) // batches and malformed JSON: go-sdk's answers
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		s.sdk.ServeHTTP(w, r)
		return
	}
	if rerr := s.checkHeaders(r.Header, body, req); rerr != nil {
		mcpio.WriteRPCError(w, http.StatusBadRequest, req.ID, rerr)
		return
	}
	if rerr := s.removedMethod(req); rerr != nil {
		mcpio.WriteRPCError(w, http.StatusNotFound, req.ID, rerr) // M-42, M-66
		return
	}
	if p, ok := mcpio.TaskListen(req); ok {
		acked, rerr := s.checkListen(principalFrom(r.Context()), p)
		if rerr != nil {
			mcpio.WriteRPCError(w, http.StatusBadRequest, req.ID, rerr)
			return
		}
		if !s.opts.DisablePush {
			s.serveListenSSE(w, r, req.ID, acked)
			return
		}
		// Push disabled: go-sdk acknowledges none of the task ids.
	}
	s.sdk.ServeHTTP(w, r)
}

// checkHeaders enforces the era and the routing headers against the body.
// It rewrites a base64-encoded Mcp-Name to its decoded value, which is what
// go-sdk compares (it neither decodes the sentinel nor checks tasks/*).
func (s *Server) checkHeaders(h http.Header, body []byte, req *jsonrpc.Request) *rpc.Error {
	hv := h.Get(modern.HeaderProtocolVersion)
	mv := metaVersion(req.Params)
	if req.Method == "initialize" && !s.opts.DualEra {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		return s.legacyRefusal(p.ProtocolVersion) // M-44
	}
	if hv == "" && mv == "" {
		if s.opts.DualEra {
			return nil // a legacy request: go-sdk serves it
		}
		s.count(func(c *Counters) { c.HeaderRejected++ })
		return rpc.Errorf(rpc.CodeHeaderMismatch,
			"Header mismatch: required %s header is missing (this server speaks only MCP %s, with per-request _meta)",
			modern.HeaderProtocolVersion, ProtocolVersion)
	}
	if hv != "" && !s.supports(hv) {
		if hv < ProtocolVersion {
			return s.legacyRefusal(hv)
		}
		return modern.ErrUnsupportedProtocolVersion(hv, s.versions()) // M-38
	}
	legacyMeta := mv != "" && mv < ProtocolVersion
	if (hv != "" && hv < ProtocolVersion) || (hv == "" && legacyMeta) {
		if !s.opts.DualEra {
			return s.legacyRefusal(mv)
		}
		if hv != "" && mv != "" && mv != hv {
			return s.headerErr(modern.ErrHeaderMismatch(modern.HeaderProtocolVersion, hv, mv))
		}
		return nil // a legacy request on a dual-era server
	}
	if req.IsCall() && mv == "" {
		return rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: missing _meta field %q", mcp.MetaKeyProtocolVersion) // M-37
	}
	if e := modern.CheckHeaders(h.Get, body); e != nil { // M-43, M-67
		if e.Code == rpc.CodeHeaderMismatch {
			return s.headerErr(e)
		}
		return e
	}
	if v := h.Get(modern.HeaderName); v != "" {
		if d, err := modern.DecodeHeaderValue(v); err == nil {
			h.Set(modern.HeaderName, d)
		}
	}
	return nil
}

func (s *Server) headerErr(e *rpc.Error) *rpc.Error {
	s.count(func(c *Counters) { c.HeaderRejected++ })
	return e
}

func (s *Server) versions() []string {
	if s.opts.DualEra {
		return append([]string{ProtocolVersion}, legacyVersions...)
	}
	return []string{ProtocolVersion}
}

func (s *Server) supports(v string) bool {
	for _, x := range s.versions() {
		if x == v {
			return true
		}
	}
	return false
}

func metaVersion(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var v string
	_ = json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v)
	return v
}

// serveListenSSE serves a task listen as a text/event-stream response.
func (s *Server) serveListenSSE(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, acked []string) {
	send, ping := mcpio.OpenSSE(w)
	_ = s.runListen(r.Context(), id, acked, send, ping)
}

// Start serves Handler at http://addr/mcp (addr default 127.0.0.1:0) until
// stop is called or ctx ends. It returns the endpoint URL.
func (s *Server) Start(ctx context.Context, addr string) (endpoint string, stop func() error, err error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("demo: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	var once sync.Once
	var stopErr error
	stopped := make(chan struct{})
	stop = func() error {
		once.Do(func() {
			close(stopped)
			s.Close() // ends listen streams with their result first
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			stopErr = srv.Shutdown(sctx)
			if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) && stopErr == nil {
				stopErr = err
			}
		})
		return stopErr
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = stop()
		case <-stopped:
		}
	}()
	return "http://" + ln.Addr().String() + "/mcp", stop, nil
}
