package edge_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/identity"
)

func TestPolicyAdmit(t *testing.T) {
	open := edge.Policy{}
	listed := edge.Policy{AllowedHosts: []string{"mcp.example.com", "gw.example:8443"}, AllowedOrigins: []string{"https://app.example.com"}}
	for _, tc := range []struct {
		name     string
		p        edge.Policy
		host     string
		origin   string
		loopback bool
		refused  string // "", "Host" or "Origin"
	}{
		{"loopback host on loopback listener", open, "127.0.0.1:8080", "", true, ""},
		{"localhost", open, "localhost:8080", "", true, ""},
		{"ipv6 loopback", open, "[::1]:8080", "", true, ""},
		{"rebinding name on loopback listener", open, "evil.example:8080", "", true, "Host"},
		{"empty Host on loopback listener", open, "", "", true, "Host"},
		{"any host on a non-loopback listener", open, "evil.example", "", false, ""},
		{"allowed host on loopback listener", listed, "mcp.example.com", "", true, ""},
		{"allowed host, any port", listed, "MCP.example.com:443", "", true, ""},
		{"allowed host with port: other port", listed, "gw.example:80", "", true, "Host"},
		{"allowed host with port: that port", listed, "gw.example:8443", "", true, ""},
		{"list set: other host refused on any listener", listed, "other.example", "", false, "Host"},
		{"list set: loopback still accepted", listed, "127.0.0.1:8080", "", false, ""},
		{"no Origin", open, "127.0.0.1", "", true, ""},
		{"loopback Origin", open, "127.0.0.1", "http://localhost:6274", true, ""},
		{"loopback https Origin", open, "127.0.0.1", "https://127.0.0.1:3000", true, ""},
		{"foreign Origin", open, "127.0.0.1", "https://evil.example", true, "Origin"},
		{"same-host Origin is not enough", open, "evil.example", "http://evil.example", false, "Origin"},
		{"same allowed host Origin is not enough", listed, "mcp.example.com", "https://mcp.example.com", false, "Origin"},
		{"null Origin", open, "127.0.0.1", "null", true, "Origin"},
		{"non-http Origin on loopback", open, "127.0.0.1", "file://localhost", true, "Origin"},
		{"listed Origin", listed, "mcp.example.com", "https://app.example.com", false, ""},
		{"listed Origin, case", listed, "mcp.example.com", "HTTPS://APP.example.com", false, ""},
		{"listed Origin, other scheme", listed, "mcp.example.com", "http://app.example.com", false, "Origin"},
		{"Host checked before Origin", listed, "other.example", "https://evil.example", false, "Host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := tc.p.Admit(tc.host, tc.origin, tc.loopback)
			got := ""
			if ref != nil {
				got = ref.Header
				if !strings.Contains(ref.Error(), "Forbidden") {
					t.Errorf("refusal %q does not start with Forbidden", ref.Error())
				}
			}
			if got != tc.refused {
				t.Errorf("Admit(%q, %q, %v) refused %q, want %q", tc.host, tc.origin, tc.loopback, got, tc.refused)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	if _, err := edge.ParseHosts([]string{"*"}); err == nil || !strings.Contains(err.Error(), "non-loopback") {
		t.Errorf("ParseHosts(*) = %v, want a refusal saying what to do", err)
	}
	if _, err := edge.ParseHosts([]string{"https://x.example/mcp"}); err == nil {
		t.Error("ParseHosts accepted a URL")
	}
	if h, err := edge.ParseHosts([]string{"A.example, b.example:8443", "c.example"}); err != nil || strings.Join(h, " ") != "a.example b.example:8443 c.example" {
		t.Errorf("ParseHosts = %v, %v", h, err)
	}
	if _, err := edge.ParseOrigins([]string{"*"}); err == nil || !strings.Contains(err.Error(), "M-43") {
		t.Errorf("ParseOrigins(*) = %v", err)
	}
	if _, err := edge.ParseOrigins([]string{"app.example.com"}); err == nil {
		t.Error("ParseOrigins accepted an origin without scheme")
	}
	if p, err := edge.ParseTrustedProxies([]string{"10.0.0.0/8,192.0.2.7", "::1"}); err != nil || len(p) != 3 || p[1].Bits() != 32 {
		t.Errorf("ParseTrustedProxies = %v, %v", p, err)
	}
	if _, err := edge.ParseTrustedProxies([]string{"proxy.example"}); err == nil {
		t.Error("ParseTrustedProxies accepted a name")
	}
}

func begin(t *testing.T, e *edge.Edge, r *http.Request) (*edge.Request, *httptest.ResponseRecorder, bool) {
	t.Helper()
	er := new(edge.Request)
	w := httptest.NewRecorder()
	ok := e.Begin(w, r, er)
	return er, w, ok
}

func newEdge(t *testing.T, cfg edge.Config) *edge.Edge {
	t.Helper()
	e, err := edge.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestTrustedProxyHeaders(t *testing.T) {
	proxies, _ := edge.ParseTrustedProxies([]string{"192.0.2.0/24"})
	e := newEdge(t, edge.Config{TrustedProxies: proxies, IdentityHeaders: []string{"x-forwarded-user"}})
	mk := func(peer string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "http://bridge.internal:8080/mcp", nil)
		r.RemoteAddr = peer
		r.Header.Set("X-Forwarded-For", "203.0.113.9")
		r.Header.Set("X-Forwarded-Proto", "https")
		r.Header.Set("X-Forwarded-Host", "mcp.example.com")
		r.Header.Set("Forwarded", "for=203.0.113.9")
		r.Header.Set("X-Forwarded-User", "alice")
		r.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		return r
	}

	r := mk("198.51.100.4:5555")
	er, _, ok := begin(t, e, r)
	if !ok || er.Trusted {
		t.Fatalf("untrusted peer: ok %v trusted %v", ok, er.Trusted)
	}
	for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "Forwarded", "X-Forwarded-User"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("untrusted peer's %s kept: %q", h, v)
		}
	}
	if got := er.PublicURL(); got != "http://bridge.internal:8080/mcp" {
		t.Errorf("untrusted public URL %q", got)
	}
	fh := er.ForwardHeader()
	if fh.Get("X-Forwarded-For") != "198.51.100.4" || fh.Get("X-Forwarded-Proto") != "http" || fh.Get("X-Forwarded-Host") != "bridge.internal:8080" || fh.Get("Traceparent") == "" {
		t.Errorf("untrusted forward headers %v", fh)
	}

	r = mk("192.0.2.10:5555")
	er, _, ok = begin(t, e, r)
	if !ok || !er.Trusted || r.Header.Get("X-Forwarded-User") != "alice" {
		t.Fatalf("trusted peer: ok %v trusted %v user %q", ok, er.Trusted, r.Header.Get("X-Forwarded-User"))
	}
	if got := er.PublicURL(); got != "https://mcp.example.com/mcp" {
		t.Errorf("trusted public URL %q", got)
	}
	fh = er.ForwardHeader()
	if fh.Get("X-Forwarded-For") != "203.0.113.9, 192.0.2.10" || fh.Get("X-Forwarded-Proto") != "https" || fh.Get("X-Forwarded-Host") != "mcp.example.com" {
		t.Errorf("trusted forward headers %v", fh)
	}

	// Forwarded alone (RFC 7239) from a trusted proxy.
	r = httptest.NewRequest(http.MethodGet, "http://bridge.internal/mcp", nil)
	r.RemoteAddr = "192.0.2.10:1"
	r.Header.Set("Forwarded", `for=203.0.113.9;proto=https;host="mcp.example.org", for=192.0.2.9`)
	if er, _, _ = begin(t, e, r); er.PublicURL() != "https://mcp.example.org/mcp" {
		t.Errorf("Forwarded public URL %q", er.PublicURL())
	}

	// --public-url wins; --no-forwarded-headers keeps only trace headers.
	e2 := newEdge(t, edge.Config{PublicURL: "https://fixed.example/mcp", NoForwardedHeaders: true})
	r = mk("198.51.100.4:5555")
	er, _, _ = begin(t, e2, r)
	if er.PublicURL() != "https://fixed.example/mcp" {
		t.Errorf("public URL %q", er.PublicURL())
	}
	if fh := er.ForwardHeader(); len(fh) != 1 || fh.Get("Traceparent") == "" {
		t.Errorf("--no-forwarded-headers: %v", fh)
	}
	// TLS without a proxy.
	r = httptest.NewRequest(http.MethodGet, "https://secure.example/mcp", nil)
	r.TLS = &tls.ConnectionState{}
	if er, _, _ = begin(t, e2, r); er.Peer.IsValid() != true {
		t.Errorf("peer %v", er.Peer)
	}
	e3 := newEdge(t, edge.Config{})
	if er, _, _ = begin(t, e3, r); er.PublicURL() != "https://secure.example/mcp" {
		t.Errorf("TLS public URL %q", er.PublicURL())
	}
}

// onceBody fails the test when it is read twice (after EOF).
type onceBody struct {
	t    *testing.T
	r    io.Reader
	done bool
}

func (b *onceBody) Read(p []byte) (int, error) {
	if b.done {
		b.t.Error("the body was read again after EOF")
		return 0, errors.New("read twice")
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.done = true
	}
	return n, err
}
func (b *onceBody) Close() error { return nil }

func TestBodyAndMessage(t *testing.T) {
	e := newEdge(t, edge.Config{MaxBodyBytes: 64})
	body := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	r.Body = &onceBody{t: t, r: strings.NewReader(body)}
	r.ContentLength = int64(len(body))
	er, _, ok := begin(t, e, r)
	if !ok || string(er.Body) != body {
		t.Fatalf("body %q ok %v", er.Body, ok)
	}
	m1, err1 := er.Message()
	m2, _ := er.Message()
	if err1 != nil || m1 != m2 {
		t.Errorf("Message: %v, decoded twice: %v", err1, m1 != m2)
	}

	big := strings.Repeat("x", 65)
	r = httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(big))
	if _, w, ok := begin(t, e, r); ok || w.Code != http.StatusRequestEntityTooLarge ||
		w.Header().Get("Content-Type") != "application/json" || !strings.Contains(w.Body.String(), `"code":-32600`) ||
		!strings.Contains(w.Body.String(), "larger than this bridge's limit of 64 bytes (--max-body-bytes)") {
		t.Errorf("oversized: ok %v status %d %s %s", ok, w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	r = httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(big))
	r.ContentLength = -1 // chunked
	if _, w, ok := begin(t, e, r); ok || w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized chunked: ok %v status %d", ok, w.Code)
	}
}

type refuse struct{ err error }

func (r refuse) Resolve(context.Context, identity.Request) (identity.Principal, error) {
	return identity.Principal{}, r.err
}

func TestIdentityRefusal(t *testing.T) {
	mdURL := func(p string) string { return "META(" + p + ")" }
	e := newEdge(t, edge.Config{Resolver: refuse{&identity.Error{Status: 401, Code: "invalid_token", Description: `the token expired; sign in "again"`}}, MetadataURL: mdURL})
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":"abc","method":"tools/list"}`))
	_, w, ok := begin(t, e, r)
	if ok || w.Code != 401 {
		t.Fatalf("ok %v status %d", ok, w.Code)
	}
	want := `Bearer error="invalid_token", error_description="the token expired; sign in \"again\"", resource_metadata="META(http://127.0.0.1:9/mcp)"`
	if got := w.Header().Get("WWW-Authenticate"); got != want {
		t.Errorf("challenge\n got %s\nwant %s", got, want)
	}
	if b := w.Body.String(); !strings.Contains(b, `"id":"abc"`) || !strings.Contains(b, "the token expired") {
		t.Errorf("body %s", b)
	}

	e = newEdge(t, edge.Config{Resolver: refuse{&identity.Error{Status: 503, Description: "the key server is unreachable", RetryAfter: 1500 * time.Millisecond}}})
	_, w, _ = begin(t, e, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil))
	if w.Code != 503 || w.Header().Get("Retry-After") != "2" || w.Header().Get("WWW-Authenticate") != "" {
		t.Errorf("503: %d Retry-After %q challenge %q", w.Code, w.Header().Get("Retry-After"), w.Header().Get("WWW-Authenticate"))
	}

	e = newEdge(t, edge.Config{Resolver: refuse{errors.New("boom: secret-token-123")}})
	_, w, _ = begin(t, e, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil))
	if w.Code != 500 || strings.Contains(w.Body.String(), "secret") {
		t.Errorf("500: %d %s", w.Code, w.Body)
	}
}

func TestHostRefusedOnLoopbackListener(t *testing.T) {
	e := newEdge(t, edge.Config{})
	r := httptest.NewRequest(http.MethodGet, "http://evil.example/mcp", nil)
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	if _, w, ok := begin(t, e, r); ok || w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "--allowed-host") {
		t.Errorf("ok %v status %d %s", ok, w.Code, w.Body)
	}
}

func TestDefaultModeAllocations(t *testing.T) {
	e := newEdge(t, edge.Config{})
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	r.Header.Set("Origin", "http://localhost:6274")
	er := new(edge.Request)
	w := httptest.NewRecorder()
	if n := testing.AllocsPerRun(100, func() { e.Begin(w, r, er) }); n != 0 {
		t.Errorf("the default mode allocates %v times per GET, want 0", n)
	}
}

// Requests without trace headers share one ForwardHeader set per Host,
// scheme and X-Forwarded-For (a parked wait keeps its request's set): no
// set of their own, and each still says its own peer; a request with a
// trace header gets its own set with it.
func TestForwardHeaderShared(t *testing.T) {
	proxies, _ := edge.ParseTrustedProxies([]string{"192.0.2.0/24"})
	e := newEdge(t, edge.Config{TrustedProxies: proxies})
	mk := func(peer, host string, hdr ...string) http.Header {
		r := httptest.NewRequest(http.MethodGet, "http://"+host+"/mcp", nil)
		r.RemoteAddr = peer
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		er, _, ok := begin(t, e, r)
		if !ok {
			t.Fatalf("request from %s refused", peer)
		}
		return er.ForwardHeader()
	}
	same := func(a, b http.Header) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	want := func(h http.Header, xff, host, proto string) {
		t.Helper()
		if h.Get("X-Forwarded-For") != xff || h.Get("X-Forwarded-Host") != host || h.Get("X-Forwarded-Proto") != proto {
			t.Errorf("forward headers %v; want For %q, Host %q, Proto %q", h, xff, host, proto)
		}
	}
	a := mk("198.51.100.4:5555", "bridge.internal:8080")
	b := mk("198.51.100.4:6666", "bridge.internal:8080")
	want(a, "198.51.100.4", "bridge.internal:8080", "http")
	if !same(a, b) {
		t.Error("two requests from one peer and Host got separate sets")
	}
	c := mk("198.51.100.5:5555", "bridge.internal:8080")
	want(c, "198.51.100.5", "bridge.internal:8080", "http")
	d := mk("198.51.100.4:5555", "other.internal")
	want(d, "198.51.100.4", "other.internal", "http")
	p := mk("192.0.2.10:1", "bridge.internal:8080", "X-Forwarded-For", "203.0.113.9", "X-Forwarded-Proto", "https")
	want(p, "203.0.113.9, 192.0.2.10", "bridge.internal:8080", "https")
	if same(a, c) || same(a, d) || same(a, p) {
		t.Error("requests with different forward headers share a set")
	}
	tr := mk("198.51.100.4:5555", "bridge.internal:8080", "Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	want(tr, "198.51.100.4", "bridge.internal:8080", "http")
	if tr.Get("Traceparent") == "" || same(a, tr) || a.Get("Traceparent") != "" {
		t.Errorf("traced request's set %v (shared %v), the shared set %v", tr, same(a, tr), a)
	}

	// What a request's set keeps: 2,000 requests from one peer keep one set
	// (about 550 B each when every request made its own).
	const n = 2000
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodPost, "http://bridge.internal:8080/mcp", strings.NewReader("{}"))
		reqs[i].RemoteAddr = "198.51.100.9:5555"
	}
	kept := make([]http.Header, n)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, r := range reqs {
		var er edge.Request
		if !e.Begin(httptest.NewRecorder(), r, &er) {
			t.Fatal("refused")
		}
		kept[i] = er.ForwardHeader()
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(reqs)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("a request's forward headers keep %d B", per)
	if per > 100 {
		t.Errorf("a request's forward headers keep %d B of heap, want ≤ 100 (one shared set)", per)
	}
	want(kept[n-1], "198.51.100.9", "bridge.internal:8080", "http")
	if !same(kept[0], kept[n-1]) {
		t.Error("the requests' sets are not shared")
	}
}
