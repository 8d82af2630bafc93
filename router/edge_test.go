package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/identity"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// upRecorder sits between the bridge and a real upstream and keeps the
// headers of every POST it relays, by JSON-RPC method.
type upRecorder struct {
	mu   sync.Mutex
	seen []recorded
}

type recorded struct {
	method string
	h      http.Header
}

func recordUpstream(t *testing.T, target string) (string, *upRecorder) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &upRecorder{}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.URL.Path = u.Path
			pr.Out.Host = ""
		},
		FlushInterval: -1,
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(b, &m)
			rec.mu.Lock()
			rec.seen = append(rec.seen, recorded{method: m.Method, h: r.Header.Clone()})
			rec.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp", rec
}

// last is the headers of the last relayed request of method.
func (r *upRecorder) last(t *testing.T, method string) http.Header {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.seen) - 1; i >= 0; i-- {
		if r.seen[i].method == method {
			return r.seen[i].h
		}
	}
	t.Fatalf("the upstream saw no %s", method)
	return nil
}

// all reports whether every relayed request satisfies ok.
func (r *upRecorder) all(ok func(http.Header) bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.seen {
		if !ok(s.h) {
			return false
		}
	}
	return len(r.seen) > 0
}

// threePaths are one bridge request per path, each opening its path:
// a legacy initialize (legacy face, modern upstream), a modern
// server/discover (modern face, legacy upstream) and a modern
// server/discover (passthrough, modern upstream).
type pathCase struct {
	name string
	url  string
	body string
	hdr  map[string]string
}

func threePaths(t *testing.T, cfg router.Config) []pathCase {
	t.Helper()
	// The demo upstream applies its own Origin policy to what is passed
	// through to it: the proxy in between hides Origin from it, so that
	// what is tested is the bridge's policy.
	modernUp := withoutOrigin(t, startModern(t))
	legacyUp, _ := startLegacy(t)
	cm, cl := cfg, cfg
	cm.Upstream, cl.Upstream = modernUp, legacyUp
	bm, bl := startBridge(t, cm), startBridge(t, cl)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	discover := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":` + modernMeta + `}}`
	mh := map[string]string{modern.HeaderProtocolVersion: modern.ProtocolVersion, modern.HeaderMethod: "server/discover"}
	return []pathCase{
		{"legacy-face", bm.url, initialize, nil},
		{"modern-face", bl.url, discover, mh},
		{"passthrough", bm.url, discover, mh},
	}
}

// modernMeta is a minimal per-request _meta of a 2026-07-28 request.
var modernMeta = `{"` + modern.MetaKeyProtocolVersion + `":"` + modern.ProtocolVersion + `","` +
	modern.MetaKeyClientCapabilities + `":{},"` + modern.MetaKeyClientInfo + `":{"name":"c","version":"1"}}`

// withoutOrigin fronts target with a proxy that drops the Origin header.
func withoutOrigin(t *testing.T, target string) string {
	t.Helper()
	u, _ := url.Parse(target)
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.URL.Path = u.Path
		pr.Out.Host = ""
		pr.Out.Header.Del("Origin")
	}, FlushInterval: -1}
	hs := httptest.NewServer(rp)
	t.Cleanup(hs.Close)
	return hs.URL + u.Path
}

// postHost sends one POST with Host and headers as given.
func postHost(t *testing.T, ctx context.Context, u, host, body string, hdr ...map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, h := range hdr {
		for k, v := range h {
			req.Header.Set(k, v)
		}
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestOneHostOriginPolicyOnEveryPath: the same Host and Origin get the same
// answer from the legacy face, the modern face and the passthrough (M-43).
func TestOneHostOriginPolicyOnEveryPath(t *testing.T) {
	ctx := ctxT(t)
	paths := threePaths(t, router.Config{AllowedOrigins: []string{"https://app.example.com"}})
	for _, tc := range []struct {
		name   string
		host   string
		origin string
		want   int
	}{
		{"no Origin", "", "", http.StatusOK},
		{"loopback Origin", "", "http://localhost:6274", http.StatusOK},
		{"listed Origin", "", "https://app.example.com", http.StatusOK},
		{"foreign Origin", "", "https://evil.example", http.StatusForbidden},
		{"same-host foreign Origin", "", "http://%HOST%", http.StatusForbidden},
		{"null Origin", "", "null", http.StatusForbidden},
		{"rebinding Host", "evil.example", "", http.StatusForbidden},
	} {
		for _, p := range paths {
			origin := tc.origin
			if strings.Contains(origin, "%HOST%") {
				// The page's own origin: what a DNS-rebinding page sends
				// next to a Host of its own name.
				u, _ := url.Parse(p.url)
				origin = strings.Replace(origin, "%HOST%", "evil.example:"+u.Port(), 1)
				tc.host = "evil.example:" + u.Port()
				tc.want = http.StatusForbidden
			}
			h := map[string]string{}
			if origin != "" {
				h["Origin"] = origin
			}
			status, _, body := postHost(t, ctx, p.url, tc.host, p.body, p.hdr, h)
			if status != tc.want {
				t.Errorf("%s on %s: HTTP %d %s, want %d", tc.name, p.name, status, body, tc.want)
			}
		}
	}
}

// TestAllowedHostAdmitsAName: --allowed-host lets a non-loopback Host reach
// a loopback listener, on every path; other names stay refused.
func TestAllowedHostAdmitsAName(t *testing.T) {
	ctx := ctxT(t)
	for _, p := range threePaths(t, router.Config{AllowedHosts: []string{"mcp.example.com"}}) {
		if status, _, body := postHost(t, ctx, p.url, "mcp.example.com", p.body, p.hdr); status != http.StatusOK {
			t.Errorf("%s: allowed Host: HTTP %d %s", p.name, status, body)
		}
		if status, _, _ := postHost(t, ctx, p.url, "other.example.com", p.body, p.hdr); status != http.StatusForbidden {
			t.Errorf("%s: other Host: HTTP %d, want 403", p.name, status)
		}
	}
	if _, err := router.New(router.Config{Upstream: "http://127.0.0.1:1/mcp", Store: sessionmap.NewMemory(), AllowedHosts: []string{"*"}}); err == nil {
		t.Error("AllowedHosts [*] accepted")
	}
	if _, err := router.New(router.Config{Upstream: "http://127.0.0.1:1/mcp", Store: sessionmap.NewMemory(), AllowedOrigins: []string{"*"}}); err == nil {
		t.Error("AllowedOrigins [*] accepted")
	}
}

// headerUser is a test principal mode: the user a trusted gateway names in
// a header (what --principal header:NAME does).
type headerUser struct{ name string }

func (h headerUser) Resolve(_ context.Context, req identity.Request) (identity.Principal, error) {
	u := req.Header.Get(h.name)
	if u == "" {
		return identity.Principal{Credential: req.Header.Get("Authorization")}, nil
	}
	if !req.TrustedPeer {
		return identity.Principal{}, errors.New("an identity header from an untrusted peer reached the resolver")
	}
	return identity.Principal{ID: sessionmap.PrincipalFromMTLSSubject("test-user:" + u), Credential: req.Header.Get("Authorization")}, nil
}

// TestIdentityHeaderTrust: X-Forwarded-User from an untrusted peer is
// deleted (the resolver and the upstream never see it); from a trusted one
// it scopes tasks.
func TestIdentityHeaderTrust(t *testing.T) {
	ctx := ctxT(t)
	const hdr = "X-Forwarded-User"

	t.Run("untrusted", func(t *testing.T) {
		modernUp, rm := recordUpstream(t, startModern(t))
		lup, _ := startLegacy(t)
		legacyUp, rl := recordUpstream(t, lup)
		cfg := router.Config{Resolver: headerUser{hdr}, IdentityHeader: hdr}
		cm, cl := cfg, cfg
		cm.Upstream, cl.Upstream = modernUp, legacyUp
		bm, bl := startBridge(t, cm), startBridge(t, cl)

		lc := newLegacyClient(t, bm.url, "l")
		lc.headers = map[string]string{hdr: "alice"}
		mustOK(t, "initialize", lc.initialize(ctx))
		mustOK(t, "legacy-face tools/call", lc.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}))
		pc := newModernClient(t, bm.url, "p")
		pc.headers = map[string]string{hdr: "alice"}
		mustOK(t, "passthrough tools/call", pc.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}))
		mc := newModernClient(t, bl.url, "m")
		mc.headers = map[string]string{hdr: "alice"}
		mustOK(t, "modern-face tools/call", mc.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}))
		for name, r := range map[string]*upRecorder{"modern upstream": rm, "legacy upstream": rl} {
			if !r.all(func(h http.Header) bool { return h.Get(hdr) == "" }) {
				t.Errorf("the %s saw an untrusted %s", name, hdr)
			}
		}
	})

	t.Run("trusted", func(t *testing.T) {
		up, _ := startLegacy(t)
		br := startBridge(t, router.Config{Upstream: up, Resolver: headerUser{hdr}, IdentityHeader: hdr, TrustedProxies: []string{"127.0.0.1/32", "::1"}})
		alice, bob := newModernClient(t, br.url, "a"), newModernClient(t, br.url, "b")
		alice.headers = map[string]string{hdr: "alice"}
		bob.headers = map[string]string{hdr: "bob"}
		ct := mustOK(t, "alice tools/call", alice.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 10, "text": "mine"}}))
		id := field(t, ct, "taskId")
		if id == "" {
			t.Fatalf("no task: %s", ct)
		}
		mustOK(t, "alice tasks/get", alice.call(ctx, "tasks/get", map[string]any{"taskId": id}))
		theirs := bob.call(ctx, "tasks/get", map[string]any{"taskId": id})
		unknownID := strings.Repeat("z", len(id))
		unknown := bob.call(ctx, "tasks/get", map[string]any{"taskId": unknownID})
		if theirs.Err == nil {
			t.Fatalf("bob read alice's task: %v", theirs)
		}
		a, _ := json.Marshal(theirs.Err)
		b, _ := json.Marshal(unknown.Err)
		if theirs.Status != unknown.Status || strings.ReplaceAll(string(a), id, "ID") != strings.ReplaceAll(string(b), unknownID, "ID") {
			t.Errorf("another user's task answers\n %d %s\nan unknown id\n %d %s", theirs.Status, a, unknown.Status, b)
		}
	})
}

// TestForwardHeadersReachUpstream: traceparent, tracestate, X-Request-Id and
// X-Forwarded-* reach the upstream on both translated paths and the
// passthrough; a trusted proxy's chain is appended to, an untrusted one
// replaced.
func TestForwardHeadersReachUpstream(t *testing.T) {
	ctx := ctxT(t)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	trace := map[string]string{"traceparent": tp, "tracestate": "vendor=1", "X-Request-Id": "req-42", "X-Forwarded-For": "203.0.113.9"}
	check := func(t *testing.T, path string, h http.Header, br *bridgeEnv, wantXFF string) {
		t.Helper()
		u, _ := url.Parse(br.url)
		for k, want := range map[string]string{"Traceparent": tp, "Tracestate": "vendor=1", "X-Request-Id": "req-42",
			"X-Forwarded-For": wantXFF, "X-Forwarded-Proto": "http", "X-Forwarded-Host": u.Host} {
			if got := h.Get(k); got != want {
				t.Errorf("%s: upstream %s = %q, want %q", path, k, got, want)
			}
		}
	}
	for _, trusted := range []bool{false, true} {
		name, wantXFF := "untrusted", "127.0.0.1"
		var proxies []string
		if trusted {
			name, wantXFF, proxies = "trusted", "203.0.113.9, 127.0.0.1", []string{"127.0.0.0/8"}
		}
		t.Run(name, func(t *testing.T) {
			modernUp, rm := recordUpstream(t, startModern(t))
			lup, _ := startLegacy(t)
			legacyUp, rl := recordUpstream(t, lup)
			bm := startBridge(t, router.Config{Upstream: modernUp, TrustedProxies: proxies})
			bl := startBridge(t, router.Config{Upstream: legacyUp, TrustedProxies: proxies})
			echo := map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}

			lc := newLegacyClient(t, bm.url, "l")
			mustOK(t, "initialize", lc.initialize(ctx))
			lc.headers = trace
			mustOK(t, "legacy-face tools/call", lc.call(ctx, "tools/call", echo))
			check(t, "legacy face", rm.last(t, "tools/call"), bm, wantXFF)

			mc := newModernClient(t, bl.url, "m")
			mc.headers = trace
			mustOK(t, "modern-face tools/call", mc.call(ctx, "tools/call", echo))
			check(t, "modern face", rl.last(t, "tools/call"), bl, wantXFF)

			pc := newModernClient(t, bm.url, "p")
			pc.headers = trace
			mustOK(t, "passthrough tools/call", pc.call(ctx, "tools/call", echo))
			check(t, "passthrough", rm.last(t, "tools/call"), bm, wantXFF)
		})
	}

	t.Run("no-forwarded-headers", func(t *testing.T) {
		modernUp, rm := recordUpstream(t, startModern(t))
		bm := startBridge(t, router.Config{Upstream: modernUp, NoForwardedHeaders: true})
		pc := newModernClient(t, bm.url, "p")
		pc.headers = trace
		mustOK(t, "passthrough tools/call", pc.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}))
		lc := newLegacyClient(t, bm.url, "l")
		lc.headers = trace
		mustOK(t, "initialize", lc.initialize(ctx))
		mustOK(t, "legacy-face tools/call", lc.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}))
		if !rm.all(func(h http.Header) bool { return h.Get("X-Forwarded-For") == "" && h.Get("X-Forwarded-Host") == "" }) {
			t.Error("X-Forwarded-* sent with NoForwardedHeaders")
		}
		if h := rm.last(t, "tools/call"); h.Get("Traceparent") != tp {
			t.Errorf("traceparent %q without forwarded headers", h.Get("Traceparent"))
		}
	})
}

// unreadBody fails the test if it is read at all: behind the edge the faces
// take the body the edge read.
type unreadBody struct{ t *testing.T }

func (b unreadBody) Read([]byte) (int, error) {
	b.t.Error("a face read the request body the edge had read")
	return 0, errors.New("already read")
}
func (unreadBody) Close() error { return nil }

func edgeRequest(t *testing.T, ctx context.Context, u, body string, hdr map[string]string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, u, nil).WithContext(edge.NewContext(ctx, &edge.Request{Body: []byte(body)}))
	r.Body = unreadBody{t}
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	return r
}

// TestFacesTakeTheEdgeBody: behind the edge neither face reads the body.
func TestFacesTakeTheEdgeBody(t *testing.T) {
	ctx := ctxT(t)
	lf, err := legacyface.New(legacyface.Config{Upstream: startModern(t), Store: sessionmap.NewMemory(), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	w := httptest.NewRecorder()
	lf.Handler().ServeHTTP(w, edgeRequest(t, ctx, "http://127.0.0.1/mcp",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"protocolVersion"`) {
		t.Errorf("legacy face initialize: %d %s", w.Code, w.Body)
	}
	sid := w.Header().Get("Mcp-Session-Id")
	w = httptest.NewRecorder()
	lf.Handler().ServeHTTP(w, edgeRequest(t, ctx, "http://127.0.0.1/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"from the edge"}}}`,
		map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}))
	if !strings.Contains(w.Body.String(), "from the edge") {
		t.Errorf("legacy face tools/call: %d %s", w.Code, w.Body)
	}

	lup, _ := startLegacy(t)
	pool, err := legacyup.NewPool(legacyup.Config{Endpoint: lup, Target: lup, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	mf, err := modernface.New(modernface.Options{Upstream: pool, Store: sessionmap.NewMemory(), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	w = httptest.NewRecorder()
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":` + modernMeta + `,"name":"echo","arguments":{"text":"from the edge"}}}`
	mf.ServeHTTP(w, edgeRequest(t, ctx, "http://127.0.0.1/mcp", body, map[string]string{
		modern.HeaderProtocolVersion: modern.ProtocolVersion, modern.HeaderMethod: "tools/call", modern.HeaderName: "echo"}))
	if !strings.Contains(w.Body.String(), "from the edge") {
		t.Errorf("modern face tools/call: %d %s", w.Code, w.Body)
	}
}

// TestPassthroughChallengePointsAtTheBridge: an upstream 401 reaches the
// client as 401 with its error and scope, and resource_metadata naming the
// bridge's own protected resource metadata (RFC 9728 §5.1).
func TestPassthroughChallengePointsAtTheBridge(t *testing.T) {
	ctx := ctxT(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="tasks:write", resource_metadata="https://up.example/.well-known/oauth-protected-resource/mcp"`)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "unauthorized")
	}))
	defer up.Close()
	br := startBridge(t, router.Config{Upstream: up.URL + "/mcp", UpstreamEra: "modern"})
	mc := newModernClient(t, br.url, "m")
	r := mc.call(ctx, "tools/list", nil)
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", r.Status)
	}
	got := r.Header.Get("WWW-Authenticate")
	want := `Bearer error="insufficient_scope", scope="tasks:write", resource_metadata="` + br.base + `/.well-known/oauth-protected-resource/mcp"`
	if got != want {
		t.Errorf("challenge\n got %s\nwant %s", got, want)
	}
}

// expired refuses every credential as an expired token.
type expired struct{}

func (expired) Resolve(context.Context, identity.Request) (identity.Principal, error) {
	return identity.Principal{}, &identity.Error{Status: http.StatusUnauthorized, Code: "invalid_token", Description: "the access token has expired; get a new one"}
}

// TestIdentityRefusalChallenges: a refused credential gets 401 with an
// invalid_token challenge naming the bridge's metadata and a JSON-RPC error
// with the request's id, on every path, before anything else runs.
func TestIdentityRefusalChallenges(t *testing.T) {
	ctx := ctxT(t)
	for _, p := range threePaths(t, router.Config{Resolver: expired{}}) {
		status, h, body := postHost(t, ctx, p.url, "", p.body, p.hdr)
		u, _ := url.Parse(p.url)
		want := `Bearer error="invalid_token", error_description="the access token has expired; get a new one", resource_metadata="http://` + u.Host + `/.well-known/oauth-protected-resource/mcp"`
		if status != http.StatusUnauthorized || h.Get("WWW-Authenticate") != want {
			t.Errorf("%s: HTTP %d %q", p.name, status, h.Get("WWW-Authenticate"))
		}
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil || string(m.ID) != "1" || !strings.Contains(m.Error.Message, "expired") {
			t.Errorf("%s: body %s", p.name, body)
		}
	}
}

// TestOAuthRelayHooks: Config.WellKnown and Config.AuthServerProxy are
// mounted behind the edge's Host policy and see the endpoint's public URL.
func TestOAuthRelayHooks(t *testing.T) {
	ctx := ctxT(t)
	relay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		er, ok := edge.FromContext(r.Context())
		if !ok {
			http.Error(w, "no edge request", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, r.URL.Path+" "+er.PublicURL())
	})
	br := startBridge(t, router.Config{Upstream: startModern(t), WellKnown: relay, AuthServerProxy: relay, TrustedProxies: []string{"127.0.0.1"}})
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/token"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, br.base+p, nil)
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("X-Forwarded-Host", "mcp.example.com")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := p + " https://mcp.example.com/mcp"; string(b) != want {
			t.Errorf("GET %s: %d %q, want %q", p, resp.StatusCode, b, want)
		}
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, br.base+p, nil)
		req.Host = "evil.example"
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s with a foreign Host: %d, want 403", p, resp.StatusCode)
		}
	}
	plain := startBridge(t, router.Config{Upstream: startModern(t)})
	if code, _ := get(t, plain.base+"/.well-known/oauth-protected-resource/mcp"); code != http.StatusNotFound {
		t.Errorf("no relay configured: %d, want 404", code)
	}
}
