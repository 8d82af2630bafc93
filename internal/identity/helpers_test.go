package identity

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// issuer is a fake OpenID provider on loopback: discovery, a JWKS whose
// keys the test changes, hit counters, and an outage switch.
type issuer struct {
	srv       *httptest.Server
	mu        sync.Mutex
	keys      []jose.JSONWebKey // public
	signers   map[string]any    // kid -> private key
	docIssuer string            // "" means srv.URL
	down      atomic.Bool
	jwksHits  atomic.Int64
	discHits  atomic.Int64
	oidcPaths bool // serve /.well-known/openid-configuration (else only RFC 8414)
}

func newIssuer(t testing.TB) *issuer {
	t.Helper()
	is := &issuer{signers: map[string]any{}, oidcPaths: true}
	mux := http.NewServeMux()
	doc := func(w http.ResponseWriter, r *http.Request) {
		is.discHits.Add(1)
		if is.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		is.mu.Lock()
		iss := is.docIssuer
		is.mu.Unlock()
		if iss == "" {
			iss = is.srv.URL
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": iss, "jwks_uri": is.srv.URL + "/jwks"})
	}
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		if !is.oidcPaths {
			http.NotFound(w, r)
			return
		}
		doc(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", doc)
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.jwksHits.Add(1)
		if is.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		is.mu.Lock()
		set := jose.JSONWebKeySet{Keys: append([]jose.JSONWebKey(nil), is.keys...)}
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

// addRSA adds (and publishes) a fresh RSA key.
func (is *issuer) addRSA(t testing.TB, kid string) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = append(is.keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: "RS256", Use: "sig"})
	is.signers[kid] = k
	return k
}

// addEC adds an ES256 key.
func (is *issuer) addEC(t testing.TB, kid string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = append(is.keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"})
	is.signers[kid] = k
}

// sign signs claims with the private key of kid (which may be unpublished).
func sign(t testing.TB, alg jose.SignatureAlgorithm, kid string, key any, c claims) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(c.jwt()).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (is *issuer) token(t testing.TB, kid string, c claims) string {
	t.Helper()
	is.mu.Lock()
	key := is.signers[kid]
	is.mu.Unlock()
	alg := jose.RS256
	if _, ok := key.(*ecdsa.PrivateKey); ok {
		alg = jose.ES256
	}
	if c.iss == "" {
		c.iss = is.srv.URL
	}
	return sign(t, alg, kid, key, c)
}

// claims are a test token's claims; zero times are left out.
type claims struct {
	iss, sub string
	aud      []string
	exp, nbf time.Time
	iat      time.Time
	jti      string
}

func (c claims) jwt() jwt.Claims {
	out := jwt.Claims{Issuer: c.iss, Subject: c.sub, Audience: c.aud, ID: c.jti}
	if !c.exp.IsZero() {
		out.Expiry = jwt.NewNumericDate(c.exp)
	}
	if !c.nbf.IsZero() {
		out.NotBefore = jwt.NewNumericDate(c.nbf)
	}
	if !c.iat.IsZero() {
		out.IssuedAt = jwt.NewNumericDate(c.iat)
	}
	return out
}

const testAudience = "https://bridge.example/mcp"

// valid returns claims for sub that pass every check.
func valid(sub string) claims {
	now := time.Now()
	return claims{sub: sub, aud: []string{testAudience}, exp: now.Add(time.Hour), iat: now, jti: randomID()}
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// logSink captures log lines (at DEBUG) so tests can assert what they hold.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *logSink) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// clock is a settable time for the rate-limit and cache tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newJWTFor builds a jwt-mode resolver for is; mutate adjusts the config.
func newJWTFor(t testing.TB, is *issuer, sink *logSink, mutate func(*Config)) *JWT {
	t.Helper()
	cfg := Config{Mode: "jwt", OIDCIssuer: is.srv.URL, HTTPClient: is.srv.Client()}
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
	return r.(*JWT)
}

func bearer(tok string) Request {
	return Request{Header: http.Header{"Authorization": {"Bearer " + tok}}, Audience: testAudience}
}

// refusal asserts err is an *Error with status and code, whose description
// contains want, and returns it.
func refusal(t *testing.T, err error, status int, code, want string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want an *Error %d", err, err, status)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("refusal = %d %q (%s), want %d %q", e.Status, e.Code, e.Description, status, code)
	}
	if !strings.Contains(e.Description, want) {
		t.Fatalf("description %q does not say %q", e.Description, want)
	}
	return e
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
