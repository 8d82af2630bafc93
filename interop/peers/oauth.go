package peers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// AuthServerOptions configures interop/oauth/as.mjs (oidc-provider 9.13.3).
type AuthServerOptions struct {
	// AccessTTL is the lifetime of access tokens (default 300 s; whole
	// seconds, at least 1).
	AccessTTL time.Duration
	// Clients are pre-registered confidential clients, ID → secret: each may
	// use client_credentials, authorization_code (PKCE) and refresh_token,
	// with redirect URIs http://127.0.0.1/callback and
	// http://localhost:3000/callback.
	Clients map[string]string
	// Opaque issues opaque access tokens (for introspection, RFC 7662)
	// instead of JWTs.
	Opaque bool
	// NoRegistration turns dynamic client registration (RFC 7591) off.
	NoRegistration bool
	// Log makes the server log each request to stderr.
	Log bool
}

// AuthServer is a running authorization server.
type AuthServer struct {
	*Server
	// Issuer is its issuer identifier, http://127.0.0.1:PORT (no trailing
	// slash); discovery is at Issuer+"/.well-known/openid-configuration".
	Issuer string
	// JWKSURL, TokenURL and IntrospectionURL are its endpoints.
	JWKSURL, TokenURL, IntrospectionURL string
}

// OAuthNode returns the node that runs interop/oauth (Node 20 suffices:
// oidc-provider 9.13.3 prints "Unsupported runtime" on Node 20 and works),
// after checking the project is installed.
func OAuthNode(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not on PATH")
	}
	if why := npmReady(t, "oauth"); why != "" {
		unavailable(t, "%s", why)
	}
	return node
}

// StartAuthServer starts the authorization server on an ephemeral
// 127.0.0.1 port; it is stopped on t.Cleanup.
func StartAuthServer(t testing.TB, o AuthServerOptions) *AuthServer {
	t.Helper()
	node := OAuthNode(t)
	if o.AccessTTL == 0 {
		o.AccessTTL = 300 * time.Second
	}
	secs := max(int64(o.AccessTTL/time.Second), 1)
	args := []string{filepath.Join(Dir(t), "oauth", "as.mjs"), "--port", "0", "--exit-on-stdin-close",
		"--access-ttl", strconv.FormatInt(secs, 10)}
	for id, secret := range o.Clients {
		args = append(args, "--client", id+":"+secret)
	}
	if o.Opaque {
		args = append(args, "--token-format", "opaque")
	}
	if o.NoRegistration {
		args = append(args, "--no-registration")
	}
	if o.Log {
		args = append(args, "--log")
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = filepath.Join(Dir(t), "oauth")
	s := startServer(t, "oauth as", cmd)
	iss := strings.TrimSuffix(s.URL, "/")
	return &AuthServer{Server: s, Issuer: iss, JWKSURL: iss + "/jwks", TokenURL: iss + "/token",
		IntrospectionURL: iss + "/token/introspection"}
}

// HarnessPreload returns interop/oauth/loopback-preload.cjs: like
// LoopbackPreload, but the bind stays synchronous, which the conformance
// harness's client-scenario servers need (they read server.address() right
// after listen(0)).
func HarnessPreload(t testing.TB) string {
	t.Helper()
	OAuthNode(t)
	return filepath.Join(Dir(t), "oauth", "loopback-preload.cjs")
}

// RunTSOAuthClient runs interop/ts/oauth-legacy-client.mjs (TypeScript SDK
// 1.32.2 with an OAuth client provider) against url and returns its report,
// like RunTSClient. Args go before the URL (see the script's usage).
func RunTSOAuthClient(t testing.TB, url string, o ClientOptions) *Report {
	t.Helper()
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	node := Node(t)
	args := []string{TSScript(t, "oauth-legacy-client.mjs"), "--timeout-ms", strconv.FormatInt(o.Timeout.Milliseconds(), 10)}
	if o.Steps != nil {
		args = append(args, "--steps", strings.Join(o.Steps, ","))
	}
	args = append(append(args, o.Args...), url)
	cmd := exec.Command(node, args...)
	cmd.Dir = filepath.Join(Dir(t), "ts")
	cmd.Env = append(os.Environ(), o.Env...)
	return runClient(t, cmd, o.Timeout)
}
