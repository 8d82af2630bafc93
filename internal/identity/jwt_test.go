package identity

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

func TestJWTPrincipalStableAcrossTokens(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	ctx := context.Background()

	c1 := valid("alice")
	t1 := is.token(t, "k1", c1)
	t2 := is.token(t, "k1", valid("alice")) // a refreshed token: other jti, iat, exp
	if t1 == t2 {
		t.Fatal("the two tokens are identical; the test proves nothing")
	}
	p1, err := r.Resolve(ctx, bearer(t1))
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	p2, err := r.Resolve(ctx, bearer(t2))
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if p1.ID == "" || p1.ID != p2.ID {
		t.Fatalf("principal changed across a refresh: %q vs %q", p1.ID, p2.ID)
	}
	if want := sessionmap.PrincipalFromSubject(is.srv.URL, "alice"); p1.ID != want {
		t.Fatalf("ID = %q, want PrincipalFromSubject(iss, sub) = %q", p1.ID, want)
	}
	if p1.Credential != "Bearer "+t1 {
		t.Fatalf("Credential is not the Authorization header as sent")
	}
	if !p1.Expires.Equal(c1.exp.Truncate(time.Second)) {
		t.Fatalf("Expires = %v, want exp %v", p1.Expires, c1.exp.Truncate(time.Second))
	}

	pb, err := r.Resolve(ctx, bearer(is.token(t, "k1", valid("bob"))))
	if err != nil {
		t.Fatalf("Resolve bob: %v", err)
	}
	if pb.ID == p1.ID {
		t.Fatal("another sub gave the same principal")
	}

	// Another issuer with the same sub: a second resolver that trusts it.
	other := newIssuer(t)
	other.addRSA(t, "k1")
	r2 := newJWTFor(t, other, nil, nil)
	po, err := r2.Resolve(ctx, bearer(other.token(t, "k1", valid("alice"))))
	if err != nil {
		t.Fatalf("Resolve other issuer: %v", err)
	}
	if po.ID == p1.ID || po.ID == "" {
		t.Fatal("another iss with the same sub gave the same principal")
	}
}

func TestJWTMissingTokenIsBareChallenge(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	for _, h := range []http.Header{{}, {"Authorization": {"Basic dXNlcjpwdw=="}}, {"Authorization": {"Bearer "}}} {
		_, err := r.Resolve(context.Background(), Request{Header: h, Audience: testAudience})
		refusal(t, err, 401, "", "this endpoint requires a bearer token")
	}
}

func TestJWTBadSignature(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	// A key the issuer never published, claiming the published kid.
	forger := newIssuer(t)
	fk := forger.addRSA(t, "k1")
	c := valid("alice")
	c.iss = is.srv.URL
	tok := sign(t, jose.RS256, "k1", fk, c)
	_, err := r.Resolve(context.Background(), bearer(tok))
	refusal(t, err, 401, "invalid_token", "signature does not verify")

	// A valid token with its payload altered.
	good := is.token(t, "k1", valid("alice"))
	parts := strings.Split(good, ".")
	payload, _ := json.Marshal(map[string]any{"iss": is.srv.URL, "sub": "mallory", "aud": testAudience, "exp": time.Now().Add(time.Hour).Unix()})
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
	_, err = r.Resolve(context.Background(), bearer(tampered))
	refusal(t, err, 401, "invalid_token", "signature does not verify")
}

func TestJWTWrongIssuer(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	c := valid("alice")
	c.iss = is.srv.URL + "/" // not exactly the issuer
	_, err := r.Resolve(context.Background(), bearer(is.token(t, "k1", c)))
	refusal(t, err, 401, "invalid_token", "another issuer (iss)")
}

func TestJWTWrongAudience(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	c := valid("alice")
	c.aud = []string{"https://upstream.internal/mcp"}
	tok := is.token(t, "k1", c)
	_, err := r.Resolve(context.Background(), bearer(tok))
	refusal(t, err, 401, "invalid_token", "audience (aud) does not include "+testAudience)

	// Configured audiences replace the dialed URL.
	r2 := newJWTFor(t, is, nil, func(c *Config) { c.Audiences = []string{"https://upstream.internal/mcp"} })
	if _, err := r2.Resolve(context.Background(), bearer(tok)); err != nil {
		t.Fatalf("a token for a configured audience was refused: %v", err)
	}
	_, err = r2.Resolve(context.Background(), bearer(is.token(t, "k1", valid("alice"))))
	refusal(t, err, 401, "invalid_token", "audience (aud)")
}

func TestJWTExpiredBeyondLeeway(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	c := valid("alice")
	c.exp = time.Now().Add(-DefaultLeeway - 5*time.Second)
	c.iat = c.exp.Add(-time.Hour)
	_, err := r.Resolve(context.Background(), bearer(is.token(t, "k1", c)))
	refusal(t, err, 401, "invalid_token", "expired (exp)")
}

func TestJWTExpiredWithinLeeway(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	c := valid("alice")
	c.exp = time.Now().Add(-DefaultLeeway / 2)
	c.iat = c.exp.Add(-time.Hour)
	if _, err := r.Resolve(context.Background(), bearer(is.token(t, "k1", c))); err != nil {
		t.Fatalf("a token expired %v ago (leeway %v) was refused: %v", DefaultLeeway/2, DefaultLeeway, err)
	}
	// With the leeway turned off the same token is refused.
	strict := newJWTFor(t, is, nil, func(c *Config) { c.Leeway = -1 })
	_, err := strict.Resolve(context.Background(), bearer(is.token(t, "k1", c)))
	refusal(t, err, 401, "invalid_token", "expired")
}

func TestJWTNotBeforeInFuture(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	c := valid("alice")
	c.nbf = time.Now().Add(DefaultLeeway + time.Minute)
	c.iat = time.Time{}
	_, err := r.Resolve(context.Background(), bearer(is.token(t, "k1", c)))
	refusal(t, err, 401, "invalid_token", "not valid yet (nbf)")
}

func TestJWTMissingExpOrSub(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	c := valid("alice")
	c.exp = time.Time{}
	_, err := r.Resolve(context.Background(), bearer(is.token(t, "k1", c)))
	refusal(t, err, 401, "invalid_token", "no expiry (exp)")
	_, err = r.Resolve(context.Background(), bearer(is.token(t, "k1", valid(""))))
	refusal(t, err, 401, "invalid_token", "subject (sub)")
}

func TestJWTAlgNone(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	// The library refuses to sign with "none", so the unsigned token is
	// assembled here: header, claims, empty signature.
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	c := valid("alice").jwt()
	c.Issuer = is.srv.URL
	tok := enc(map[string]string{"alg": "none", "typ": "JWT", "kid": "k1"}) + "." + enc(c) + "."
	_, err := r.Resolve(context.Background(), bearer(tok))
	refusal(t, err, 401, "invalid_token", "signing algorithm is not accepted")
}

func TestJWTHS256WithPublicKeyAsSecret(t *testing.T) {
	is := newIssuer(t)
	priv := is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	c := valid("alice")
	c.iss = is.srv.URL
	for name, secret := range map[string][]byte{"pem": pemBytes, "der": der} {
		tok := sign(t, jose.HS256, "k1", secret, c)
		_, err := r.Resolve(context.Background(), bearer(tok))
		e := refusal(t, err, 401, "invalid_token", "signing algorithm is not accepted")
		if strings.Contains(e.Description, "HS256 ") {
			t.Errorf("%s: the description lists HS256 as accepted: %q", name, e.Description)
		}
	}
}

func TestJWTUnknownKidRefetchesOnceAndRotates(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	clk := newClock()
	r.now = clk.now
	if got := is.jwksHits.Load(); got != 1 {
		t.Fatalf("JWKS fetched %d times at New, want 1", got)
	}
	ctx := context.Background()
	if _, err := r.Resolve(ctx, bearer(is.token(t, "k1", valid("alice")))); err != nil {
		t.Fatal(err)
	}

	// The issuer rotates: k2 is published after the bridge cached k1.
	clk.advance(DefaultJWKSRefetchInterval + time.Second)
	is.addEC(t, "k2")
	p, err := r.Resolve(ctx, bearer(is.token(t, "k2", valid("alice"))))
	if err != nil {
		t.Fatalf("a token signed with the rotated-in key was refused: %v", err)
	}
	if p.ID != sessionmap.PrincipalFromSubject(is.srv.URL, "alice") {
		t.Fatal("the rotated key gave another principal")
	}
	if got := is.jwksHits.Load(); got != 2 {
		t.Fatalf("JWKS hits = %d after one unknown kid, want exactly 2 (New + one refetch)", got)
	}
	// Later tokens with k2 use the cache.
	if _, err := r.Resolve(ctx, bearer(is.token(t, "k2", valid("alice")))); err != nil {
		t.Fatal(err)
	}
	// A kid nobody published, inside the window: no fetch, refused.
	forger := newIssuer(t)
	fk := forger.addRSA(t, "k3")
	c := valid("alice")
	c.iss = is.srv.URL
	_, err = r.Resolve(ctx, bearer(sign(t, jose.RS256, "k3", fk, c)))
	refusal(t, err, 401, "invalid_token", "signing key (kid) is not among the issuer's current keys")
	if got := is.jwksHits.Load(); got != 2 {
		t.Fatalf("JWKS hits = %d, want 2: an unknown kid inside the rate-limit window must not refetch", got)
	}
	// After the window, one more fetch is allowed.
	clk.advance(DefaultJWKSRefetchInterval + time.Second)
	_, err = r.Resolve(ctx, bearer(sign(t, jose.RS256, "k3", fk, c)))
	refusal(t, err, 401, "invalid_token", "kid")
	if got := is.jwksHits.Load(); got != 3 {
		t.Fatalf("JWKS hits = %d, want 3 after the window passed", got)
	}
}

func TestJWTUnknownKidBurstOneRefetch(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	r := newJWTFor(t, is, nil, nil)
	clk := newClock()
	r.now = clk.now
	clk.advance(DefaultJWKSRefetchInterval + time.Second)
	is.addRSA(t, "k2")
	const n = 50
	toks := make([]string, n)
	for i := range toks {
		toks[i] = is.token(t, "k2", valid("alice"))
	}
	before := is.jwksHits.Load()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := r.Resolve(context.Background(), bearer(toks[i]))
			errs <- err
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Resolve: %v", err)
		}
	}
	if got := is.jwksHits.Load() - before; got != 1 {
		t.Fatalf("%d concurrent unknown-kid tokens caused %d JWKS fetches, want exactly 1", n, got)
	}
}

func TestJWTKeysDownCachedKeysWork(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	sink := &logSink{}
	r := newJWTFor(t, is, sink, nil)
	clk := newClock()
	r.now = clk.now
	is.down.Store(true)
	// Past the max age, the next request refreshes in the background; the
	// refresh fails and the cached key keeps working.
	clk.advance(DefaultJWKSMaxAge + time.Minute)
	tok := is.token(t, "k1", valid("alice"))
	before := is.jwksHits.Load()
	if _, err := r.Resolve(context.Background(), bearer(tok)); err != nil {
		t.Fatalf("cached key refused while the JWKS is down: %v", err)
	}
	waitFor(t, "the background refresh to fail", func() bool { return strings.Contains(sink.String(), "cannot fetch the token issuer's keys") })
	if is.jwksHits.Load() <= before {
		t.Fatal("no background refresh was attempted past the max age")
	}
	if _, err := r.Resolve(context.Background(), bearer(is.token(t, "k1", valid("alice")))); err != nil {
		t.Fatalf("cached key refused after a failed refresh: %v", err)
	}
	// An unknown kid while the issuer is down may be a rotation the bridge
	// cannot see: retry later, not "log in again".
	forger := newIssuer(t)
	fk := forger.addRSA(t, "k9")
	c := valid("alice")
	c.iss = is.srv.URL
	_, err := r.Resolve(context.Background(), bearer(sign(t, jose.RS256, "k9", fk, c)))
	refusal(t, err, 503, "", "unreachable")
}

func TestJWTKeysDownNoKeys503(t *testing.T) {
	is2 := newIssuer(t)
	is2.addRSA(t, "k1")
	is2.down.Store(true)
	sink := &logSink{}
	r2 := newJWTFor(t, is2, sink, func(c *Config) { c.JWKSURL = is2.srv.URL + "/jwks" })
	_, err := r2.Resolve(context.Background(), bearer(is2.token(t, "k1", valid("alice"))))
	host := strings.TrimPrefix(is2.srv.URL, "http://")
	e := refusal(t, err, 503, "", "cannot verify tokens right now: the issuer's keys ("+host+") are unreachable")
	if e.RetryAfter < time.Second || e.RetryAfter > DefaultJWKSRefetchInterval {
		t.Fatalf("RetryAfter = %v, want between 1s and the refetch interval", e.RetryAfter)
	}
	if !strings.Contains(sink.String(), "level=WARN") {
		t.Fatalf("the outage was not logged as a warning: %s", sink.String())
	}
	// The issuer comes back; after the window the keys are fetched.
	is2.down.Store(false)
	clk := newClock()
	r2.now = clk.now
	clk.advance(DefaultJWKSRefetchInterval + time.Second)
	if _, err := r2.Resolve(context.Background(), bearer(is2.token(t, "k1", valid("alice")))); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
	if !strings.Contains(sink.String(), "reachable again") {
		t.Fatal("the recovery was not logged")
	}
}

func TestNewDiscoveryIssuerMismatch(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	is.docIssuer = "https://evil.example"
	_, err := New(context.Background(), Config{Mode: "jwt", OIDCIssuer: is.srv.URL, HTTPClient: is.srv.Client()})
	if err == nil || !strings.Contains(err.Error(), `names the issuer "https://evil.example", not the configured --oidc-issuer`) {
		t.Fatalf("New = %v, want a refusal of the mismatched issuer", err)
	}
	if is.jwksHits.Load() != 0 {
		t.Fatal("the keys of a mismatched issuer were fetched")
	}
}

func TestNewDiscoveryFallsBackToRFC8414(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	is.oidcPaths = false
	r := newJWTFor(t, is, nil, nil)
	if _, err := r.Resolve(context.Background(), bearer(is.token(t, "k1", valid("alice")))); err != nil {
		t.Fatalf("RFC 8414 discovery: %v", err)
	}
	if is.discHits.Load() != 1 {
		t.Fatalf("discovery hits = %d, want 1 (the RFC 8414 document; the OIDC path 404s)", is.discHits.Load())
	}
}

func TestNewIssuerDownStartsAnyway(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	is.down.Store(true)
	r := newJWTFor(t, is, nil, nil)
	_, err := r.Resolve(context.Background(), bearer(is.token(t, "k1", valid("alice"))))
	refusal(t, err, 503, "", "cannot verify tokens right now")
}

func TestJWTOnlyJWKSURLAcceptsSignedIssuer(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	sink := &logSink{}
	r := newJWTFor(t, is, sink, func(c *Config) { c.OIDCIssuer, c.JWKSURL = "", is.srv.URL+"/jwks" })
	c := valid("alice")
	c.iss = "https://some-issuer.example"
	p, err := r.Resolve(context.Background(), bearer(is.token(t, "k1", c)))
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != sessionmap.PrincipalFromSubject("https://some-issuer.example", "alice") {
		t.Fatal("the principal does not include the token's iss")
	}
	if !strings.Contains(sink.String(), "without --oidc-issuer") {
		t.Fatal("no warning that the issuer is not pinned")
	}
	if is.discHits.Load() != 0 {
		t.Fatal("discovery ran although --jwks-url was given")
	}
}

func BenchmarkJWTResolve(b *testing.B) {
	is := newIssuer(b)
	is.addEC(b, "k1")
	cfg := Config{Mode: "jwt", OIDCIssuer: is.srv.URL, HTTPClient: is.srv.Client()}
	r, err := New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	req := bearer(is.token(b, "k1", valid("alice")))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Resolve(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func TestJWTIssuerMismatchAfterOutage(t *testing.T) {
	is := newIssuer(t)
	is.addRSA(t, "k1")
	is.down.Store(true)
	sink := &logSink{}
	r := newJWTFor(t, is, sink, nil)
	clk := newClock()
	r.now = clk.now
	// The issuer comes back serving someone else's metadata.
	is.mu.Lock()
	is.docIssuer = "https://evil.example"
	is.mu.Unlock()
	is.down.Store(false)
	clk.advance(DefaultJWKSRefetchInterval + time.Second)
	_, err := r.Resolve(context.Background(), bearer(is.token(t, "k1", valid("alice"))))
	e := refusal(t, err, 503, "", "the issuer's metadata")
	if strings.Contains(e.Description, "evil.example") {
		t.Fatal("the client is shown the operator's configuration details")
	}
	if !strings.Contains(sink.String(), "level=ERROR") || !strings.Contains(sink.String(), "evil.example") {
		t.Fatalf("the operator's log does not say what is wrong: %s", sink.String())
	}
	if is.jwksHits.Load() != 0 {
		t.Fatal("keys were fetched from a mismatched issuer's metadata")
	}
}
