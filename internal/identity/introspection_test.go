package identity

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

const (
	testClientID     = "bridge client"
	testClientSecret = "s3cr:et&=" // needs the RFC 6749 §2.3.1 form-encoding
)

// authServer is a fake RFC 7662 endpoint on loopback.
type authServer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	answers map[string]map[string]any // token -> answer
	hits    atomic.Int64
	lastErr atomic.Value  // string: what the last request got wrong, "" if nothing
	gate    chan struct{} // when set, answers wait until it is closed
}

func newAuthServer(t *testing.T) *authServer {
	t.Helper()
	as := &authServer{answers: map[string]map[string]any{}}
	as.lastErr.Store("")
	as.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		as.hits.Add(1)
		if as.gate != nil {
			select {
			case <-as.gate:
			case <-r.Context().Done():
				return
			}
		}
		id, secret, ok := r.BasicAuth()
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		if !ok || id != testClientID || secret != testClientSecret {
			w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			as.lastErr.Store("not a form POST")
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if err := r.ParseForm(); err != nil || r.PostForm.Get("token_type_hint") != "access_token" {
			as.lastErr.Store("no token_type_hint=access_token")
		}
		as.mu.Lock()
		a, found := as.answers[r.PostForm.Get("token")]
		as.mu.Unlock()
		if !found {
			a = map[string]any{"active": false}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(as.srv.Close)
	return as
}

func (as *authServer) set(token string, answer map[string]any) {
	as.mu.Lock()
	as.answers[token] = answer
	as.mu.Unlock()
}

func newIntrospectionFor(t *testing.T, as *authServer, sink *logSink, mutate func(*Config)) *Introspection {
	t.Helper()
	cfg := Config{Mode: "introspection", IntrospectionURL: as.srv.URL, IntrospectionClientID: testClientID,
		IntrospectionClientSecret: testClientSecret, HTTPClient: as.srv.Client()}
	if sink != nil {
		cfg.Logger = sink.logger()
	}
	if mutate != nil {
		mutate(&cfg)
	}
	r, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r.(*Introspection)
}

func TestIntrospectionActive(t *testing.T) {
	as := newAuthServer(t)
	in := newIntrospectionFor(t, as, nil, nil)
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	as.set("opaque-1", map[string]any{"active": true, "iss": "https://as.example", "sub": "alice", "exp": exp.Unix()})
	as.set("opaque-2", map[string]any{"active": true, "iss": "https://as.example", "sub": "alice", "exp": exp.Unix()})
	p1, err := in.Resolve(context.Background(), bearer("opaque-1"))
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if msg := as.lastErr.Load().(string); msg != "" {
		t.Fatalf("the endpoint saw a bad request: %s", msg)
	}
	if p1.ID != sessionmap.PrincipalFromSubject("https://as.example", "alice") {
		t.Fatal("ID is not PrincipalFromSubject(iss, sub)")
	}
	if p1.Credential != "Bearer opaque-1" || !p1.Expires.Equal(exp) {
		t.Fatalf("Credential/Expires = %q/%v", p1.Credential, p1.Expires)
	}
	p2, err := in.Resolve(context.Background(), bearer("opaque-2"))
	if err != nil || p2.ID != p1.ID {
		t.Fatalf("another token of the same (iss, sub) gave %q, %v", p2.ID, err)
	}

	// No iss: the endpoint stands for the issuer. No sub: username.
	as.set("opaque-3", map[string]any{"active": true, "username": "alice"})
	p3, err := in.Resolve(context.Background(), bearer("opaque-3"))
	if err != nil {
		t.Fatal(err)
	}
	if p3.ID != sessionmap.PrincipalFromSubject(as.srv.URL, "alice") {
		t.Fatal("without iss and sub the principal is not (introspection URL, username)")
	}
	// Neither sub nor username: refused, with words that say why.
	as.set("opaque-4", map[string]any{"active": true, "iss": "https://as.example"})
	_, err = in.Resolve(context.Background(), bearer("opaque-4"))
	refusal(t, err, 401, "invalid_token", "names no user")
}

func TestIntrospectionInactive(t *testing.T) {
	as := newAuthServer(t)
	in := newIntrospectionFor(t, as, nil, nil)
	as.set("revoked", map[string]any{"active": false})
	_, err := in.Resolve(context.Background(), bearer("revoked"))
	refusal(t, err, 401, "invalid_token", "not active")
	_, err = in.Resolve(context.Background(), bearer("never-issued"))
	refusal(t, err, 401, "invalid_token", "not active")
	_, err = in.Resolve(context.Background(), Request{Header: http.Header{}})
	refusal(t, err, 401, "", "requires a bearer token")
}

func TestIntrospectionCachedUntilExp(t *testing.T) {
	as := newAuthServer(t)
	in := newIntrospectionFor(t, as, nil, nil)
	clk := newClock()
	in.now = clk.now
	ctx := context.Background()
	as.set("short", map[string]any{"active": true, "sub": "alice", "exp": clk.now().Add(20 * time.Second).Unix()})
	for range 3 {
		if _, err := in.Resolve(ctx, bearer("short")); err != nil {
			t.Fatal(err)
		}
	}
	if got := as.hits.Load(); got != 1 {
		t.Fatalf("endpoint hits = %d for three uses of one token, want 1 (cached)", got)
	}
	// Past exp the cached answer is gone; the endpoint is asked again.
	clk.advance(21 * time.Second)
	as.set("short", map[string]any{"active": false})
	_, err := in.Resolve(ctx, bearer("short"))
	refusal(t, err, 401, "invalid_token", "not active")
	if got := as.hits.Load(); got != 2 {
		t.Fatalf("endpoint hits = %d after exp, want 2", got)
	}

	// A long-lived token is re-checked after the max TTL (revocation).
	as.set("long", map[string]any{"active": true, "sub": "bob", "exp": clk.now().Add(time.Hour).Unix()})
	if _, err := in.Resolve(ctx, bearer("long")); err != nil {
		t.Fatal(err)
	}
	clk.advance(DefaultIntrospectionCacheTTL - time.Second)
	if _, err := in.Resolve(ctx, bearer("long")); err != nil {
		t.Fatal(err)
	}
	if got := as.hits.Load(); got != 3 {
		t.Fatalf("endpoint hits = %d inside the TTL, want 3", got)
	}
	clk.advance(2 * time.Second)
	as.set("long", map[string]any{"active": false})
	_, err = in.Resolve(ctx, bearer("long"))
	refusal(t, err, 401, "invalid_token", "not active")
	if got := as.hits.Load(); got != 4 {
		t.Fatalf("endpoint hits = %d past the TTL, want 4", got)
	}
}

func TestIntrospectionCacheBounded(t *testing.T) {
	as := newAuthServer(t)
	in := newIntrospectionFor(t, as, nil, func(c *Config) { c.IntrospectionCacheSize = 2 })
	for _, tok := range []string{"a", "b", "c", "a"} {
		as.set(tok, map[string]any{"active": true, "sub": tok})
		if _, err := in.Resolve(context.Background(), bearer(tok)); err != nil {
			t.Fatal(err)
		}
	}
	if n := in.cache.len(); n != 2 {
		t.Fatalf("cache holds %d answers, want the bound 2", n)
	}
	// "a" was evicted by "c", so its second use asked again.
	if got := as.hits.Load(); got != 4 {
		t.Fatalf("endpoint hits = %d, want 4", got)
	}
}

func TestIntrospectionAudience(t *testing.T) {
	as := newAuthServer(t)
	in := newIntrospectionFor(t, as, nil, nil)
	as.set("for-us", map[string]any{"active": true, "sub": "alice", "aud": []string{"x", testAudience}})
	as.set("for-them", map[string]any{"active": true, "sub": "alice", "aud": "https://other.example/mcp"})
	if _, err := in.Resolve(context.Background(), bearer("for-us")); err != nil {
		t.Fatalf("a token whose aud includes the dialed URL was refused: %v", err)
	}
	_, err := in.Resolve(context.Background(), bearer("for-them"))
	refusal(t, err, 401, "invalid_token", "audience (aud) does not include "+testAudience)
}

func TestIntrospectionEndpointDown(t *testing.T) {
	as := newAuthServer(t)
	sink := &logSink{}
	in := newIntrospectionFor(t, as, sink, nil)
	as.srv.Close()
	_, err := in.Resolve(context.Background(), bearer("opaque-down"))
	host := strings.TrimPrefix(as.srv.URL, "http://")
	e := refusal(t, err, 503, "", "cannot verify tokens right now: the token introspection endpoint ("+host+") is unreachable")
	if e.RetryAfter <= 0 {
		t.Fatal("503 without Retry-After")
	}
	if !strings.Contains(sink.String(), "cannot reach the token introspection endpoint") {
		t.Fatalf("the outage was not logged: %s", sink.String())
	}
}

func TestIntrospectionBadClientCredentials(t *testing.T) {
	as := newAuthServer(t)
	sink := &logSink{}
	in := newIntrospectionFor(t, as, sink, func(c *Config) { c.IntrospectionClientSecret = "wrong" })
	as.set("opaque-1", map[string]any{"active": true, "sub": "alice"})
	_, err := in.Resolve(context.Background(), bearer("opaque-1"))
	refusal(t, err, 503, "", "refuses the bridge's client credentials")
	if !strings.Contains(sink.String(), "level=ERROR") || !strings.Contains(sink.String(), "--introspection-client-secret-file") {
		t.Fatalf("the operator is not told which setting to fix: %s", sink.String())
	}
	if strings.Contains(sink.String(), "wrong") {
		t.Fatal("the client secret reached the log")
	}
}

func TestIntrospectionConcurrentShareOneCall(t *testing.T) {
	as := newAuthServer(t)
	as.gate = make(chan struct{})
	in := newIntrospectionFor(t, as, nil, nil)
	as.set("shared", map[string]any{"active": true, "sub": "alice"})
	const n = 20
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := in.Resolve(context.Background(), bearer("shared"))
			errs <- err
		}()
	}
	waitFor(t, "the first introspection call", func() bool { return as.hits.Load() == 1 })
	close(as.gate)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := as.hits.Load(); got != 1 {
		t.Fatalf("%d concurrent uses of one token made %d introspection calls, want 1", n, got)
	}
}

func TestIntrospectionCallerGivesUp(t *testing.T) {
	as := newAuthServer(t)
	as.gate = make(chan struct{})
	t.Cleanup(func() { close(as.gate) })
	in := newIntrospectionFor(t, as, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := in.Resolve(ctx, bearer("slow"))
		done <- err
	}()
	waitFor(t, "the introspection call", func() bool { return as.hits.Load() == 1 })
	cancel()
	select {
	case err := <-done:
		refusal(t, err, 503, "", "did not answer before the request ended")
	case <-time.After(5 * time.Second):
		t.Fatal("Resolve kept waiting after its request ended")
	}
}
