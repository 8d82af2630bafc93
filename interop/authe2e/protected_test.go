//go:build unix

package authe2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// prmPath is where a server whose MCP endpoint is /mcp serves its protected
// resource metadata (RFC 9728 §3.1: the well-known prefix inserted before the
// path).
const prmPath = "/.well-known/oauth-protected-resource/mcp"

// gate is an OAuth resource server in front of an MCP endpoint: every
// request to /mcp needs `Authorization: Bearer <JWT>` that verifies against
// the authorization server's JWKS (ES256 pinned), with iss == the issuer,
// aud containing the expected audience (the URL clients dial: the bridge's
// public URL behind a bridge, RFC 8707) and exp in the future. Anything else
// gets 401 with a challenge naming the metadata document (RFC 6750 §3,
// RFC 9728 §5.1), which gate serves with resource = its own /mcp URL.
type gate struct {
	issuer   string
	keys     oidc.KeySet
	next     http.Handler
	base     string // http://127.0.0.1:PORT, set once serving
	audience atomic.Pointer[string]

	accepted atomic.Int64
	mu       sync.Mutex
	refusals []string // why requests were refused (never the token)
	subjects map[string]int
}

func newGate(t testing.TB, as *peers.AuthServer, next http.Handler) *gate {
	return &gate{
		issuer:   as.Issuer,
		keys:     oidc.NewRemoteKeySet(context.Background(), as.JWKSURL),
		next:     next,
		subjects: map[string]int{},
	}
}

// URL is the protected MCP endpoint.
func (g *gate) URL() string { return g.base + "/mcp" }

// SetAudience sets the audience tokens must carry (default: URL()).
func (g *gate) SetAudience(aud string) { g.audience.Store(&aud) }

func (g *gate) wantAudience() string {
	if a := g.audience.Load(); a != nil {
		return *a
	}
	return g.URL()
}

// Refusals returns the reasons of every refused request so far.
func (g *gate) Refusals() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.refusals...)
}

// Subjects counts accepted requests per token subject.
func (g *gate) Subjects() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{}
	for k, v := range g.subjects {
		out[k] = v
	}
	return out
}

func (g *gate) challenge(w http.ResponseWriter, code, desc string) {
	c := fmt.Sprintf(`Bearer resource_metadata="%s%s", scope="mcp"`, g.base, prmPath)
	if code != "" {
		c += fmt.Sprintf(`, error="%s", error_description="%s"`, code, strings.ReplaceAll(desc, `"`, `'`))
	}
	w.Header().Set("WWW-Authenticate", c)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_token", "error_description": desc})
}

func (g *gate) refuse(w http.ResponseWriter, r *http.Request, code, desc string) {
	g.mu.Lock()
	g.refusals = append(g.refusals, fmt.Sprintf("%s %s: %s", r.Method, r.URL.Path, desc))
	g.mu.Unlock()
	g.challenge(w, code, desc)
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case prmPath, "/.well-known/oauth-protected-resource":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"resource":                 g.URL(),
			"authorization_servers":    []string{g.issuer},
			"scopes_supported":         []string{"mcp"},
			"bearer_methods_supported": []string{"header"},
		})
		return
	case "/mcp":
	default:
		http.NotFound(w, r)
		return
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		g.refuse(w, r, "", "no bearer token")
		return
	}
	aud := g.wantAudience()
	v := oidc.NewVerifier(g.issuer, g.keys, &oidc.Config{ClientID: aud, SupportedSigningAlgs: []string{oidc.ES256}})
	tok, err := v.Verify(r.Context(), token)
	if err != nil {
		g.refuse(w, r, "invalid_token", err.Error())
		return
	}
	g.accepted.Add(1)
	g.mu.Lock()
	g.subjects[tok.Subject]++
	g.mu.Unlock()
	// A resource server binds what a caller creates to the authenticated
	// subject, not to the token, so tasks outlive a refreshed token. The
	// embedded server keys tasks by a digest of the Authorization header:
	// hand it the verified (iss, sub) instead of the token.
	r.Header.Set("Authorization", "Subject "+tok.Issuer+" "+tok.Subject)
	g.next.ServeHTTP(w, r)
}

// serveGate serves g on an ephemeral 127.0.0.1 port until the test ends.
func serveGate(t testing.TB, g *gate) {
	t.Helper()
	hs := httptest.NewUnstartedServer(g)
	g.base = "http://" + hs.Listener.Addr().String() // before serving: read by ServeHTTP
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
}

// startAS starts the authorization server with one pre-registered client.
func startAS(t testing.TB, accessTTL time.Duration) *peers.AuthServer {
	t.Helper()
	return peers.StartAuthServer(t, peers.AuthServerOptions{AccessTTL: accessTTL, Clients: map[string]string{clientID: clientSecret}})
}

// The pre-registered confidential client of the tests (test-only values).
const (
	clientID     = "e2e-client"
	clientSecret = "e2e-client-secret-not-a-real-one"
)

// startProtectedModern serves the embedded modern upstream (internal/demo,
// 2026-07-28 + tasks extension) behind a gate.
func startProtectedModern(t testing.TB, as *peers.AuthServer) *gate {
	t.Helper()
	srv := demo.New(demo.Options{PollInterval: 20 * time.Millisecond})
	t.Cleanup(srv.Close)
	g := newGate(t, as, srv.Handler())
	serveGate(t, g)
	return g
}

// startProtectedLegacy serves the TypeScript SDK 1.32.2 legacy fixture
// (interop/ts/legacy-server.mjs) behind a gate (a reverse proxy).
func startProtectedLegacy(t testing.TB, as *peers.AuthServer) *gate {
	t.Helper()
	ts := peers.StartTSServer(t, peers.TSServerOptions{})
	target, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
			pr.Out.Header.Del("Authorization") // checked by the gate; the fixture keys tasks by session
		},
		FlushInterval: -1, // SSE
	}
	g := newGate(t, as, proxy)
	serveGate(t, g)
	return g
}
