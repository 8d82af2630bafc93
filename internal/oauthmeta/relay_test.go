package oauthmeta

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
)

// fakeClock is the relay's clock in tests: time moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// upstream is a fake MCP server's origin: handlers by path, hits counted.
type upstream struct {
	*httptest.Server
	mu       sync.Mutex
	handlers map[string]http.HandlerFunc
	hits     map[string]*atomic.Int64
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{handlers: map[string]http.HandlerFunc{}, hits: map[string]*atomic.Int64{}}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		h := u.handlers[r.URL.Path]
		n := u.hits[r.URL.Path]
		if n == nil {
			n = new(atomic.Int64)
			u.hits[r.URL.Path] = n
		}
		u.mu.Unlock()
		n.Add(1)
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) handle(path string, h http.HandlerFunc) {
	u.mu.Lock()
	u.handlers[path] = h
	u.mu.Unlock()
}

func (u *upstream) count(path string) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	if n := u.hits[path]; n != nil {
		return n.Load()
	}
	return 0
}

func (u *upstream) mcpURL(path string) *url.URL {
	p, _ := url.Parse(u.URL + path)
	return p
}

func serveDoc(doc string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		// The documents name the upstream's own URL, as a correct one does.
		_, _ = io.WriteString(w, strings.ReplaceAll(doc, "http://upstream.internal", "http://"+r.Host))
	}
}

const upstreamDoc = `{"resource":"http://upstream.internal/mcp","authorization_servers":["https://as.example/tenant"],` +
	`"scopes_supported":["files:read"],"bearer_methods_supported":["header"],"x_vendor":{"tier":"gold","list":[1,2]}}`

type testRelay struct {
	*Relay
	clock *fakeClock
	logs  *syncbuf.Buffer
}

func newTestRelay(t *testing.T, up *url.URL, public string, mod func(*Config)) *testRelay {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}
	logs := &syncbuf.Buffer{}
	pub, err := url.Parse(public)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Upstream:  up,
		Client:    &http.Client{Timeout: 5 * time.Second},
		PublicURL: func(*http.Request) *url.URL { c := *pub; return &c },
		Logger:    slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:       clock.Now,
	}
	if mod != nil {
		mod(&cfg)
	}
	return &testRelay{Relay: New(cfg), clock: clock, logs: logs}
}

func (tr *testRelay) get(t *testing.T, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	tr.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://bridge.example"+path, nil))
	return rec
}

func decodeDoc(t *testing.T, rec *httptest.ResponseRecorder) map[string]json.RawMessage {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	return doc
}

func errorDescription(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var e struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
		t.Fatalf("error body %q is not an OAuth error object (%v)", rec.Body.String(), err)
	}
	return e.ErrorDescription
}

func TestPRMPathSuffixedResourceRewritten(t *testing.T) {
	up := newUpstream(t)
	up.handle("/.well-known/oauth-protected-resource/mcp", serveDoc(upstreamDoc))
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", nil)

	rec := tr.get(t, "/.well-known/oauth-protected-resource/mcp")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	doc := decodeDoc(t, rec)
	if string(doc["resource"]) != `"https://bridge.example/mcp"` {
		t.Errorf("resource = %s, want the bridge's public URL", doc["resource"])
	}
	var orig map[string]json.RawMessage
	_ = json.Unmarshal([]byte(upstreamDoc), &orig)
	for k, v := range orig {
		if k != "resource" && string(doc[k]) != string(v) {
			t.Errorf("member %s = %s, want %s as the upstream sent it", k, doc[k], v)
		}
	}
	if len(doc) != len(orig) {
		t.Errorf("members %d, want %d", len(doc), len(orig))
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache (the upstream gave no lifetime)", cc)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	// The root well-known URI describes the same endpoint.
	if doc := decodeDoc(t, tr.get(t, "/.well-known/oauth-protected-resource")); string(doc["resource"]) != `"https://bridge.example/mcp"` {
		t.Errorf("root resource = %s", doc["resource"])
	}
	// A path that is not the bridge's endpoint is not a resource.
	rec = tr.get(t, "/.well-known/oauth-protected-resource/other")
	if rec.Code != http.StatusNotFound || !strings.Contains(errorDescription(t, rec), MetadataURL(tr.public(nil))) {
		t.Errorf("other path: %d %s", rec.Code, rec.Body)
	}
}

func TestPRMRootFallbackAndRootEndpoint(t *testing.T) {
	up := newUpstream(t)
	up.handle("/.well-known/oauth-protected-resource", serveDoc(upstreamDoc, "Cache-Control", "max-age=60"))
	up.handle("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		http.NotFound(w, r)
	})
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/", nil)

	rec := tr.get(t, "/.well-known/oauth-protected-resource")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if doc := decodeDoc(t, rec); string(doc["resource"]) != `"https://bridge.example/"` {
		t.Errorf("resource = %s", doc["resource"])
	}
	if up.count("/.well-known/oauth-protected-resource/mcp") != 1 || up.count("/.well-known/oauth-protected-resource") != 1 {
		t.Errorf("fetch order: suffixed %d, root %d; want one each", up.count("/.well-known/oauth-protected-resource/mcp"), up.count("/.well-known/oauth-protected-resource"))
	}
	// The 404's no-store does not stop the root document being cached.
	tr.get(t, "/.well-known/oauth-protected-resource")
	if up.count("/.well-known/oauth-protected-resource") != 1 {
		t.Errorf("root fetched %d times within the TTL", up.count("/.well-known/oauth-protected-resource"))
	}
}

func TestPRMLearntFromChallenge(t *testing.T) {
	up := newUpstream(t)
	up.handle("/meta/prm.json", serveDoc(upstreamDoc))
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", nil)
	tr.Learn([]string{`DPoP algs="ES256"`, `Bearer error="invalid_token", resource_metadata="` + up.URL + `/meta/prm.json"`})

	rec := tr.get(t, "/.well-known/oauth-protected-resource/mcp")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if up.count("/meta/prm.json") != 1 || up.count("/.well-known/oauth-protected-resource/mcp") != 0 {
		t.Errorf("learnt URL hits %d, well-known hits %d", up.count("/meta/prm.json"), up.count("/.well-known/oauth-protected-resource/mcp"))
	}
	if !strings.Contains(tr.logs.String(), "names its protected resource metadata in its challenge") {
		t.Errorf("no log of the learnt URL: %s", tr.logs)
	}
}

func TestRelayAuthErrorLearnsAndRewrites(t *testing.T) {
	up := newUpstream(t)
	up.handle("/meta", serveDoc(upstreamDoc))
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", nil)
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "https://bridge.example/mcp", nil)
	tr.RelayAuthError(rec, r, &UpstreamAuthError{Status: 401, Method: "initialize",
		Challenges: []string{`Bearer resource_metadata="` + up.URL + `/meta"`}}, json.RawMessage(`1`))
	if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer resource_metadata="https://bridge.example/.well-known/oauth-protected-resource/mcp"` {
		t.Errorf("WWW-Authenticate = %q", got)
	}
	if tr.get(t, "/.well-known/oauth-protected-resource/mcp").Code != 200 || up.count("/meta") != 1 {
		t.Errorf("the learnt URL was not used: hits %d", up.count("/meta"))
	}
}

func TestPRMCacheTTLAndMaxAge(t *testing.T) {
	up := newUpstream(t)
	const p = "/.well-known/oauth-protected-resource/mcp"
	// A longer upstream max-age is capped at the TTL.
	up.handle(p, serveDoc(upstreamDoc, "Cache-Control", "public, max-age=300"))
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", func(c *Config) { c.TTL = 30 * time.Second })

	tr.get(t, p)
	tr.clock.Advance(29 * time.Second)
	rec := tr.get(t, p)
	if n := up.count(p); n != 1 {
		t.Fatalf("fetches within the TTL = %d, want 1", n)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "public, max-age=1" {
		t.Errorf("Cache-Control from the cache = %q, want the remaining lifetime", cc)
	}
	tr.clock.Advance(2 * time.Second)
	tr.get(t, p)
	if n := up.count(p); n != 2 {
		t.Fatalf("fetches after the TTL = %d, want 2", n)
	}

	// A shorter upstream max-age wins over the TTL.
	up.handle(p, serveDoc(upstreamDoc, "Cache-Control", "public, max-age=5"))
	tr.clock.Advance(31 * time.Second)
	tr.get(t, p) // fetch 3, cached for 5 s
	tr.clock.Advance(4 * time.Second)
	tr.get(t, p)
	if n := up.count(p); n != 3 {
		t.Fatalf("fetches within max-age = %d, want 3", n)
	}
	tr.clock.Advance(2 * time.Second)
	tr.get(t, p)
	if n := up.count(p); n != 4 {
		t.Fatalf("fetches after max-age = %d, want 4", n)
	}

	// no-store: never cached.
	up.handle(p, serveDoc(upstreamDoc, "Cache-Control", "no-store"))
	tr.clock.Advance(10 * time.Second)
	tr.get(t, p)
	tr.get(t, p)
	if n := up.count(p); n != 6 {
		t.Fatalf("fetches with no-store = %d, want 6", n)
	}

	// No Cache-Control: no lifetime, never kept (RFC 9111 §4.2.2 heuristics
	// do not apply to a document that names authorization servers).
	up.handle(p, serveDoc(upstreamDoc))
	tr.get(t, p)
	if rec := tr.get(t, p); rec.Header().Get("Cache-Control") != "no-cache" {
		t.Errorf("Cache-Control without an upstream lifetime = %q", rec.Header().Get("Cache-Control"))
	}
	if n := up.count(p); n != 8 {
		t.Fatalf("fetches without Cache-Control = %d, want 8", n)
	}
}

// Concurrent requests share one upstream fetch. The document has a
// lifetime, so a request the scheduler starts only after the shared fetch
// has ended (the test releases it once the fetch arrives, not once all 20
// requests joined it) is served from the cache instead of fetching again:
// one fetch, whatever the order.
func TestPRMConcurrentRequestsFetchOnce(t *testing.T) {
	up := newUpstream(t)
	const p = "/.well-known/oauth-protected-resource/mcp"
	release := make(chan struct{})
	up.handle(p, func(w http.ResponseWriter, r *http.Request) {
		<-release
		serveDoc(upstreamDoc, "Cache-Control", "max-age=60")(w, r)
	})
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", nil)
	var wg sync.WaitGroup
	codes := make(chan int, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- tr.get(t, p).Code
		}()
	}
	// Release the one fetch once it has arrived.
	deadline := time.Now().Add(5 * time.Second)
	for up.count(p) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Errorf("status %d", c)
		}
	}
	if n := up.count(p); n != 1 {
		t.Errorf("upstream fetches = %d, want 1", n)
	}
}

func TestPRMUpstreamFailures(t *testing.T) {
	const p = "/.well-known/oauth-protected-resource/mcp"
	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: the upstream serves nothing (404)
		status  int
		want    string
	}{
		{"no metadata", nil, http.StatusNotFound, "publishes no OAuth protected resource metadata"},
		{"server error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, http.StatusBadGateway, "HTTP 500"},
		{"unavailable", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			http.Error(w, "later", 503)
		}, http.StatusServiceUnavailable, "HTTP 503"},
		{"oversize", serveDoc(`{"resource":"x","authorization_servers":["https://as"],"pad":"` + strings.Repeat("a", 70<<10) + `"}`), http.StatusBadGateway, "larger than 64 KiB"},
		{"not JSON", serveDoc(`<html>`), http.StatusBadGateway, "not a JSON object"},
		{"no authorization servers", serveDoc(`{"resource":"http://u/mcp"}`), http.StatusBadGateway, `no "authorization_servers"`},
		{"no resource", serveDoc(`{"authorization_servers":["https://as"]}`), http.StatusBadGateway, `no "resource"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t)
			if tc.handler != nil {
				up.handle(p, tc.handler)
			}
			tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", nil)
			rec := tr.get(t, p)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if d := errorDescription(t, rec); !strings.Contains(d, tc.want) {
				t.Errorf("description %q lacks %q", d, tc.want)
			}
			if tc.status == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") != "7" {
				t.Errorf("Retry-After = %q", rec.Header().Get("Retry-After"))
			}
		})
	}
}

func TestPRMNotFoundIsCachedForItsMaxAge(t *testing.T) {
	up := newUpstream(t)
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		up.handle(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "max-age=60")
			http.NotFound(w, r)
		})
	}
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", nil)
	tr.get(t, "/.well-known/oauth-protected-resource/mcp")
	tr.get(t, "/.well-known/oauth-protected-resource/mcp")
	if n := up.count("/.well-known/oauth-protected-resource/mcp"); n != 1 {
		t.Errorf("fetches of an absent document within the TTL = %d, want 1", n)
	}
}

func TestPRMUpstreamDown(t *testing.T) {
	up := newUpstream(t)
	u := up.mcpURL("/mcp")
	up.Close()
	tr := newTestRelay(t, u, "https://bridge.example/mcp", nil)
	rec := tr.get(t, "/.well-known/oauth-protected-resource/mcp")
	if rec.Code != http.StatusBadGateway {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	d := errorDescription(t, rec)
	if !strings.Contains(d, "could not fetch") || strings.Contains(d, "dial tcp") || strings.Contains(d, "127.0.0.1") {
		t.Errorf("description %q: want the gist without Go error text", d)
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("a failure must not be cached by clients: %q", rec.Header().Get("Cache-Control"))
	}
	if !strings.Contains(tr.logs.String(), "could not fetch the upstream's protected resource metadata") {
		t.Errorf("no WARN log: %s", tr.logs)
	}
}

func TestPRMMethodsAndLoop(t *testing.T) {
	up := newUpstream(t)
	up.handle("/.well-known/oauth-protected-resource/mcp", serveDoc(upstreamDoc))
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", nil)
	rec := httptest.NewRecorder()
	tr.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/.well-known/oauth-protected-resource/mcp", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	tr.ServeHTTP(rec, httptest.NewRequest(http.MethodOptions, "/.well-known/oauth-protected-resource/mcp", nil))
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("OPTIONS: %d %v", rec.Code, rec.Header())
	}
	// The relay's own fetch reaching the relay is answered at once.
	rec = httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", nil)
	req.Header.Set(loopHeader, tr.loopID)
	tr.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound || up.count("/.well-known/oauth-protected-resource/mcp") != 0 {
		t.Errorf("loop: %d, upstream hits %d", rec.Code, up.count("/.well-known/oauth-protected-resource/mcp"))
	}
}

func TestASProxy(t *testing.T) {
	up := newUpstream(t)
	var gotAuth, gotFwd atomic.Value
	up.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		gotAuth.Store(r.Header.Get("Authorization"))
		gotFwd.Store(r.Header.Get("X-Forwarded-Host"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant","echo":"` + string(body) + `"}`))
	})
	up.handle("/register", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"client_id":"c1"}`))
	})
	up.handle("/.well-known/oauth-authorization-server", serveDoc(`{"issuer":"`+up.URL+`","token_endpoint":"`+up.URL+`/token"}`))
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", func(c *Config) { c.ProxyAuthServer = true })
	mux := http.NewServeMux()
	for _, p := range tr.Patterns() {
		mux.Handle(p, tr)
	}
	bridge := httptest.NewServer(mux)
	defer bridge.Close()

	const secret = "grant_type=authorization_code&code=SECRETCODE&code_verifier=VERIFIER"
	req, _ := http.NewRequest(http.MethodPost, bridge.URL+"/token", strings.NewReader(secret))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("client", "CLIENTSECRET")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"echo":"`+secret+`"`) {
		t.Errorf("/token: %d %s; want the upstream's status and the body passed through", resp.StatusCode, body)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("/token Cache-Control = %q", resp.Header.Get("Cache-Control"))
	}
	if a, _ := gotAuth.Load().(string); !strings.HasPrefix(a, "Basic ") {
		t.Errorf("client authentication not forwarded: %q", a)
	}
	if f, _ := gotFwd.Load().(string); f != strings.TrimPrefix(bridge.URL, "http://") {
		t.Errorf("X-Forwarded-Host = %q", f)
	}
	for _, s := range []string{"SECRETCODE", "VERIFIER", "CLIENTSECRET", "Y2xpZW50"} {
		if strings.Contains(tr.logs.String(), s) {
			t.Errorf("the log holds %q: %s", s, tr.logs)
		}
	}

	resp, err = http.Post(bridge.URL+"/register", "application/json", strings.NewReader(`{"redirect_uris":["http://localhost/cb"]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("/register: %d", resp.StatusCode)
	}
	for i := 0; i < 2; i++ {
		resp, err = http.Get(bridge.URL + "/.well-known/oauth-authorization-server")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if resp.StatusCode != 200 || up.count("/.well-known/oauth-authorization-server") != 2 {
		t.Errorf("AS metadata: %d, upstream hits %d (want proxied every time)", resp.StatusCode, up.count("/.well-known/oauth-authorization-server"))
	}
	// The upstream's origin serves no OpenID configuration: its 404 passes through.
	resp, err = http.Get(bridge.URL + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || up.count("/.well-known/openid-configuration") != 1 {
		t.Errorf("openid-configuration: %d, upstream hits %d", resp.StatusCode, up.count("/.well-known/openid-configuration"))
	}
}

func TestASProxyOff(t *testing.T) {
	up := newUpstream(t)
	up.handle("/token", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", nil)
	for _, p := range tr.Patterns() {
		if !strings.HasPrefix(p, "/.well-known/oauth-protected-resource") {
			t.Errorf("pattern %q mounted without ProxyAuthServer", p)
		}
	}
	rec := httptest.NewRecorder()
	tr.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/token", strings.NewReader("x=1")))
	if rec.Code != http.StatusNotFound || up.count("/token") != 0 {
		t.Errorf("/token with the proxy off: %d, upstream hits %d", rec.Code, up.count("/token"))
	}
}

func TestASProxyUpstreamDown(t *testing.T) {
	up := newUpstream(t)
	u := up.mcpURL("/mcp")
	up.Close()
	tr := newTestRelay(t, u, "https://bridge.example/mcp", func(c *Config) { c.ProxyAuthServer = true })
	rec := httptest.NewRecorder()
	tr.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/token", strings.NewReader("code=SECRET")))
	if rec.Code != http.StatusBadGateway || !strings.Contains(errorDescription(t, rec), "refused the connection") {
		t.Errorf("status %d body %s", rec.Code, rec.Body)
	}
	if strings.Contains(tr.logs.String(), "SECRET") {
		t.Errorf("the log holds the body: %s", tr.logs)
	}
}

func TestPatternsMountOnServeMux(t *testing.T) {
	tr := newTestRelay(t, &url.URL{Scheme: "http", Host: "127.0.0.1:1", Path: "/mcp"}, "https://bridge.example/mcp", func(c *Config) { c.ProxyAuthServer = true })
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.NotFoundHandler())
	for _, p := range tr.Patterns() {
		mux.Handle(p, tr) // panics on a conflicting or invalid pattern
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/authorize", "/token", "/register", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		if _, pat := mux.Handler(httptest.NewRequest(http.MethodGet, p, nil)); pat == "" || pat == "/mcp" {
			t.Errorf("%s routes to %q", p, pat)
		}
	}
}

// An upstream behind a bridge that took over its public URL names the
// bridge's metadata in its challenges: the relay must not wait for itself,
// and falls back to the upstream's well-known URI.
func TestPRMLearntURLLeadingBackToTheBridge(t *testing.T) {
	up := newUpstream(t)
	up.handle("/.well-known/oauth-protected-resource/mcp", serveDoc(upstreamDoc))
	var tr *testRelay
	bridge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tr.ServeHTTP(w, r) }))
	defer bridge.Close()
	tr = newTestRelay(t, up.mcpURL("/mcp"), bridge.URL+"/mcp", nil)
	self := MetadataURL(tr.public(nil))

	// RelayAuthError does not learn the bridge's own URL.
	rec := httptest.NewRecorder()
	tr.RelayAuthError(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil),
		&UpstreamAuthError{Status: 401, Challenges: []string{`Bearer resource_metadata="` + self + `"`}}, nil)
	if got := tr.candidates(); len(got) == 0 || got[0] == self {
		t.Errorf("learnt the bridge's own URL: %q", got)
	}

	// Learn does; the fetch reaching the bridge is answered as a loop.
	tr.Learn([]string{`Bearer resource_metadata="` + self + `"`})
	resp, err := http.Get(self)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(doc["resource"]) != `"`+bridge.URL+`/mcp"` {
		t.Fatalf("status %d resource %s", resp.StatusCode, doc["resource"])
	}
	if up.count("/.well-known/oauth-protected-resource/mcp") != 1 || !strings.Contains(tr.logs.String(), "leads back to this bridge") {
		t.Errorf("upstream hits %d; logs %s", up.count("/.well-known/oauth-protected-resource/mcp"), tr.logs)
	}
}

func TestOriginProxyAndBodyLimit(t *testing.T) {
	up := newUpstream(t)
	up.handle("/login", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "login page") })
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", func(c *Config) { c.ProxyAuthServer = true })
	rec := httptest.NewRecorder()
	tr.OriginProxy().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/login?next=%2Fauthorize", nil))
	if rec.Code != 200 || rec.Body.String() != "login page" {
		t.Errorf("/login via OriginProxy: %d %q", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	tr.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/token", strings.NewReader(strings.Repeat("a", maxProxiedBody+1))))
	if rec.Code != http.StatusRequestEntityTooLarge || up.count("/token") != 0 {
		t.Errorf("oversize /token body: %d %s, upstream hits %d", rec.Code, rec.Body, up.count("/token"))
	}
}

func TestPRMUpstreamTLSAndTimeoutGist(t *testing.T) {
	tlsUp := httptest.NewTLSServer(serveDoc(upstreamDoc))
	defer tlsUp.Close()
	u, _ := url.Parse(tlsUp.URL + "/mcp")
	tr := newTestRelay(t, u, "https://bridge.example/mcp", nil) // a client that does not trust the test CA
	rec := tr.get(t, "/.well-known/oauth-protected-resource/mcp")
	if d := errorDescription(t, rec); rec.Code != http.StatusBadGateway || !strings.Contains(d, "its TLS certificate was not accepted") || strings.Contains(d, "x509") {
		t.Errorf("TLS: %d %q", rec.Code, d)
	}

	stuck := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(stuck)
	u, _ = url.Parse(slow.URL + "/mcp")
	tr = newTestRelay(t, u, "https://bridge.example/mcp", func(c *Config) { c.Client = &http.Client{Timeout: 100 * time.Millisecond} })
	rec = tr.get(t, "/.well-known/oauth-protected-resource/mcp")
	if d := errorDescription(t, rec); rec.Code != http.StatusBadGateway || !strings.Contains(d, "did not answer in time") {
		t.Errorf("timeout: %d %q", rec.Code, d)
	}
}

func TestPRMResourceMismatchServedUnchanged(t *testing.T) {
	up := newUpstream(t)
	const p = "/.well-known/oauth-protected-resource/mcp"
	up.handle(p, serveDoc(`{"resource":"https://evil.example.com/mcp","authorization_servers":["https://as.example"]}`))
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", nil)

	for range 2 {
		rec := tr.get(t, p)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if got := string(decodeDoc(t, rec)["resource"]); got != `"https://evil.example.com/mcp"` {
			t.Fatalf("resource = %s, want the upstream's, unchanged, so the client refuses it", got)
		}
	}
	if n := strings.Count(tr.logs.String(), "names another resource than the upstream's URL"); n != 1 {
		t.Errorf("WARN logged %d times, want once:\n%s", n, tr.logs)
	}
	if !strings.Contains(tr.logs.String(), "level=WARN") {
		t.Errorf("not a WARN: %s", tr.logs)
	}

	// Once the upstream names itself, the bridge's URL is served again.
	up.handle(p, serveDoc(upstreamDoc))
	if got := string(decodeDoc(t, tr.get(t, p))["resource"]); got != `"https://bridge.example/mcp"` {
		t.Errorf("resource after the fix = %s", got)
	}
}

func TestSameResource(t *testing.T) {
	up, _ := url.Parse("http://Up.Example:80/a/mcp")
	for res, want := range map[string]bool{
		"http://up.example/a/mcp":       true,
		"http://up.example:80/a/mcp/":   true,
		"HTTP://UP.EXAMPLE/a/mcp":       true,
		"http://up.example":             true, // the origin: every endpoint there
		"http://up.example/a":           true,
		"http://up.example/a/mcp/x":     false,
		"http://up.example/a/mc":        false,
		"http://up.example/b/mcp":       false,
		"https://up.example/a/mcp":      false,
		"http://up.example:8080/a/mcp":  false,
		"http://evil.example/a/mcp":     false,
		"http://up.example/a/mcp?x=1":   false,
		"http://u@up.example/a/mcp":     false,
		"http://up.example/a/mcp#frag":  false,
		"not a url at all with spaces%": false,
	} {
		if got := sameResource(res, up); got != want {
			t.Errorf("sameResource(%q) = %v, want %v", res, got, want)
		}
	}
}

func TestPRMRefusalRefetchesChangedAuthorizationServers(t *testing.T) {
	up := newUpstream(t)
	const p = "/.well-known/oauth-protected-resource/mcp"
	doc := func(as string) string {
		return `{"resource":"http://upstream.internal/mcp","authorization_servers":["` + as + `"]}`
	}
	// The upstream allows a long lifetime: only a refusal makes the relay
	// look again before it ends.
	up.handle(p, serveDoc(doc("https://as1.example"), "Cache-Control", "max-age=3600"))
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", nil)
	servers := func() string { return string(decodeDoc(t, tr.get(t, p))["authorization_servers"]) }

	if got := servers(); got != `["https://as1.example"]` {
		t.Fatalf("authorization_servers = %s", got)
	}
	up.handle(p, serveDoc(doc("https://as2.example"), "Cache-Control", "max-age=3600"))
	tr.clock.Advance(10 * time.Second)
	if got := servers(); got != `["https://as1.example"]` || up.count(p) != 1 {
		t.Fatalf("within the lifetime without a refusal: %s after %d fetches, want the kept copy", got, up.count(p))
	}
	// The upstream refuses the as1 token; the client discovers again.
	rec := httptest.NewRecorder()
	tr.RelayAuthError(rec, httptest.NewRequest(http.MethodPost, "https://bridge.example/mcp", nil),
		&UpstreamAuthError{Status: 401, Method: "tools/call", Challenges: []string{`Bearer scope="mcp:basic"`}}, json.RawMessage(`1`))
	if got := servers(); got != `["https://as2.example"]` {
		t.Errorf("after a refusal authorization_servers = %s, want the upstream's current as2", got)
	}
	if up.count(p) != 2 {
		t.Errorf("fetches = %d, want 2", up.count(p))
	}
}

// A 2025-03-26 upstream that is its own authorization server (issuer at its
// origin, endpoints under a path of its own): behind the bridge the client
// builds the issuer from the bridge's origin, so the bridge fronts it.
func TestASProxyFrontsTheUpstreamsOwnAuthorizationServer(t *testing.T) {
	up := newUpstream(t)
	up.handle("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		serveDoc(`{"issuer":"`+up.URL+`","authorization_endpoint":"`+up.URL+`/oauth/authorize","token_endpoint":"`+up.URL+
			`/oauth/token","registration_endpoint":"`+up.URL+`/oauth/register","jwks_uri":"https://keys.example/jwks",`+
			`"authorization_response_iss_parameter_supported":true,"response_types_supported":["code"]}`)(w, r)
	})
	up.handle("/oauth/authorize", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/cb?code=c1&state=s1&iss="+url.QueryEscape(up.URL), http.StatusFound)
	})
	up.handle("/oauth/token", serveDoc(`{"access_token":"t","token_type":"Bearer"}`))
	up.handle("/other", serveDoc(`{}`))
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", func(c *Config) { c.ProxyAuthServer = true })
	mux := http.NewServeMux()
	for _, p := range tr.Patterns() {
		mux.Handle(p, tr)
	}
	bridge := httptest.NewServer(mux)
	defer bridge.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, bridge.URL+path, strings.NewReader("grant_type=authorization_code"))
		req.Header.Set("Accept-Encoding", "gzip") // the metadata is still rewritten
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}

	// A client that read the metadata elsewhere (another replica, before a
	// restart) goes straight to an endpoint: the relay reads the metadata
	// itself to learn it is one.
	if resp, _ := do(http.MethodPost, "/oauth/token"); resp.StatusCode != http.StatusOK || up.count("/oauth/token") != 1 {
		t.Fatalf("/oauth/token before any metadata request: %d, upstream hits %d", resp.StatusCode, up.count("/oauth/token"))
	}
	if n := up.count("/.well-known/oauth-authorization-server"); n != 1 {
		t.Fatalf("metadata fetches by the relay = %d, want 1", n)
	}
	resp, body := do(http.MethodGet, "/.well-known/oauth-authorization-server")
	var meta map[string]any
	if err := json.Unmarshal(body, &meta); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("metadata: %d %s (%v)", resp.StatusCode, body, err)
	}
	for k, want := range map[string]any{
		"issuer":                 "https://bridge.example",
		"authorization_endpoint": "https://bridge.example/oauth/authorize",
		"token_endpoint":         "https://bridge.example/oauth/token",
		"registration_endpoint":  "https://bridge.example/oauth/register",
		"jwks_uri":               "https://keys.example/jwks", // another origin: as sent
		"authorization_response_iss_parameter_supported": true,
	} {
		if meta[k] != want {
			t.Errorf("%s = %v, want %v", k, meta[k], want)
		}
	}
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("Content-Length %d for %d bytes", resp.ContentLength, len(body))
	}
	// The authorization response's iss is the issuer the client now knows.
	resp, _ = do(http.MethodGet, "/oauth/authorize?client_id=x")
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || loc.Query().Get("iss") != "https://bridge.example" || loc.Query().Get("code") != "c1" || loc.Query().Get("state") != "s1" {
		t.Errorf("authorize: %d Location %q, want iss=https://bridge.example with code and state kept", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body = do(http.MethodPost, "/oauth/token")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"access_token"`) || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("token: %d %s Cache-Control %q", resp.StatusCode, body, resp.Header.Get("Cache-Control"))
	}
	// Only the endpoints the metadata names are proxied, and a known
	// authorization server is not asked again.
	if resp, _ := do(http.MethodGet, "/other"); resp.StatusCode != http.StatusNotFound || up.count("/other") != 0 {
		t.Errorf("/other: %d, upstream hits %d", resp.StatusCode, up.count("/other"))
	}
	if n := up.count("/.well-known/oauth-authorization-server"); n != 2 {
		t.Errorf("metadata fetches = %d, want 2 (the relay's and the client's)", n)
	}
}

// An authorization server with an issuer of its own is reached directly:
// its metadata passes through unchanged and nothing new is proxied.
func TestASProxyLeavesAnotherIssuerAlone(t *testing.T) {
	up := newUpstream(t)
	const doc = `{"issuer":"https://as.example","token_endpoint":"https://as.example/oauth/token"}`
	up.handle("/.well-known/oauth-authorization-server", serveDoc(doc))
	tr := newTestRelay(t, up.mcpURL("/mcp"), "https://bridge.example/mcp", func(c *Config) { c.ProxyAuthServer = true })
	rec := httptest.NewRecorder()
	tr.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://bridge.example/.well-known/oauth-authorization-server", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != doc {
		t.Errorf("metadata: %d %s, want it as sent", rec.Code, rec.Body)
	}
	const meta = "/.well-known/oauth-authorization-server"
	token := func() int {
		rec := httptest.NewRecorder()
		tr.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "https://bridge.example/oauth/token", strings.NewReader("x=1")))
		return rec.Code
	}
	if code := token(); code != http.StatusNotFound || up.count("/oauth/token") != 0 || up.count(meta) != 2 {
		t.Errorf("/oauth/token: %d, upstream token hits %d, metadata hits %d (want 404, 0, 2)", code, up.count("/oauth/token"), up.count(meta))
	}
	// Unknown paths make the relay look again at most once a minute.
	token()
	if up.count(meta) != 2 {
		t.Errorf("metadata fetched again at once: %d", up.count(meta))
	}
	tr.clock.Advance(asDiscoverEvery)
	token()
	if up.count(meta) != 3 {
		t.Errorf("metadata fetches after a minute = %d, want 3", up.count(meta))
	}
}
