package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

func TestNewConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown mode", Config{Mode: "kerberos"}, "is not a mode: use authorization, jwt, introspection, header:NAME or mtls"},
		{"jwt without source", Config{Mode: "jwt"}, "--principal jwt needs --oidc-issuer"},
		{"HS256", Config{Mode: "jwt", JWKSURL: "https://idp.example/jwks", Algorithms: []string{"RS256", "HS256"}}, "HS256 is a shared-secret (HMAC) algorithm and is never accepted"},
		{"none", Config{Mode: "jwt", JWKSURL: "https://idp.example/jwks", Algorithms: []string{"none"}}, `"none" (an unsigned token) is never accepted`},
		{"unknown alg", Config{Mode: "jwt", JWKSURL: "https://idp.example/jwks", Algorithms: []string{"RS1"}}, `"RS1" is not an accepted algorithm`},
		{"plain http issuer", Config{Mode: "jwt", OIDCIssuer: "http://idp.example"}, "must use https"},
		{"relative jwks", Config{Mode: "jwt", JWKSURL: "/jwks"}, "is not an absolute http(s) URL"},
		{"empty audience", Config{Mode: "jwt", JWKSURL: "https://idp.example/jwks", Audiences: []string{""}}, "--audience has an empty value"},
		{"introspection without url", Config{Mode: "introspection"}, "--principal introspection needs --introspection-url"},
		{"introspection without client", Config{Mode: "introspection", IntrospectionURL: "https://as.example/introspect"}, "needs --introspection-client-id"},
		{"header without name", Config{Mode: "header:"}, "needs the header's name"},
		{"header bad name", Config{Mode: "header:X User"}, "is not a valid HTTP header name"},
		{"header authorization", Config{Mode: "header:authorization"}, "use --principal authorization"},
		{"mtls arg", Config{Mode: "mtls:x"}, "mtls mode takes no argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A 127.0.0.1 port nothing listens on would do too; none of
			// these cases gets as far as a fetch.
			r, err := New(context.Background(), c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New = %v, %v; want an error saying %q", r, err, c.want)
			}
		})
	}
}

func TestNewDefaultIsAuthorization(t *testing.T) {
	for _, mode := range []string{"", "authorization", "Authorization"} {
		r, err := New(context.Background(), Config{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := r.(AuthorizationHeader); !ok {
			t.Fatalf("mode %q gave %T, want AuthorizationHeader", mode, r)
		}
	}
	r, _ := New(context.Background(), Config{})
	p, err := r.Resolve(context.Background(), Request{Header: http.Header{"Authorization": {"Bearer k"}}})
	if err != nil || p.ID != sessionmap.PrincipalFromAuthorization("Bearer k") {
		t.Fatalf("authorization mode: %q, %v", p.ID, err)
	}
}

func TestGatewayHeaderTrustedVsUntrusted(t *testing.T) {
	sink := &logSink{}
	r, err := New(context.Background(), Config{Mode: "header:x-forwarded-user", Logger: sink.logger()})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"X-Forwarded-User": {"alice"}, "Authorization": {"Bearer upstream-token"}}
	ctx := context.Background()

	p, err := r.Resolve(ctx, Request{Header: h, TrustedPeer: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != sessionmap.PrincipalFromGatewayUser("X-Forwarded-User", "alice") || p.ID == "" {
		t.Fatalf("trusted gateway: ID %q is not PrincipalFromGatewayUser", p.ID)
	}
	if p.Credential != "Bearer upstream-token" {
		t.Fatal("the Authorization header is not forwarded as the credential")
	}

	// The same header from a peer that is not a trusted proxy: ignored.
	p, err = r.Resolve(ctx, Request{Header: h, TrustedPeer: false})
	if err != nil || p.ID != "" {
		t.Fatalf("untrusted peer: ID %q, %v; want anonymous", p.ID, err)
	}
	if !strings.Contains(sink.String(), "not a --trusted-proxy") {
		t.Fatal("the ignored header was not logged")
	}
	if strings.Contains(sink.String(), "alice") {
		t.Fatal("the gateway user reached the log")
	}

	// A trusted gateway that did not name a user: anonymous.
	p, err = r.Resolve(ctx, Request{Header: http.Header{}, TrustedPeer: true})
	if err != nil || p.ID != "" {
		t.Fatalf("absent header: ID %q, %v; want anonymous", p.ID, err)
	}
	// Twice: ambiguous, refused.
	_, err = r.Resolve(ctx, Request{Header: http.Header{"X-Forwarded-User": {"alice", "bob"}}, TrustedPeer: true})
	refusal(t, err, 400, "invalid_request", "more than once")
}

// testPKI is a CA and one client certificate it signed.
func testPKI(t *testing.T) (ca *x509.Certificate, client tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ = x509.ParseCertificate(caDER)
	cKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "client-a", Organization: []string{"Example"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour).Truncate(time.Second), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	cDER, err := x509.CreateCertificate(rand.Reader, cTmpl, ca, &cKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(cDER)
	return ca, tls.Certificate{Certificate: [][]byte{cDER}, PrivateKey: cKey, Leaf: leaf}
}

func TestMTLS(t *testing.T) {
	ca, clientCert := testPKI(t)
	r, err := New(context.Background(), Config{Mode: "mtls"})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		p   Principal
		err error
	}
	got := make(chan result, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p, err := r.Resolve(req.Context(), Request{Header: req.Header, TLS: req.TLS})
		got <- result{p, err}
	}))
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	srv.TLS = &tls.Config{ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	// With a verified client certificate.
	// srv.Client() is one shared client: each case gets its own transport.
	client := func(certs ...tls.Certificate) *http.Client {
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.TLSClientConfig.Certificates = certs
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	resp, err := client(clientCert).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	res := <-got
	if res.err != nil {
		t.Fatalf("Resolve with a verified certificate: %v", res.err)
	}
	if want := sessionmap.PrincipalFromMTLSSubject("CN=client-a,O=Example"); res.p.ID != want {
		t.Fatalf("ID = %q, want PrincipalFromMTLSSubject of the subject", res.p.ID)
	}
	if !res.p.Expires.Equal(clientCert.Leaf.NotAfter) {
		t.Fatalf("Expires = %v, want the certificate's NotAfter", res.p.Expires)
	}

	// Without one: 401.
	resp, err = client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	res = <-got
	refusal(t, res.err, 401, "", "requires a verified client certificate")

	// Plain HTTP: 401.
	_, err = r.Resolve(context.Background(), Request{Header: http.Header{}})
	refusal(t, err, 401, "", "client certificate")
}

// TestNoTokenInErrorsOrLogs drives every refusal path and asserts that no
// error text and no log line holds the token or a part of it.
func TestNoTokenInErrorsOrLogs(t *testing.T) {
	sink := &logSink{}
	ctx := context.Background()
	var tokens []string
	var errs []error
	try := func(r Resolver, tok string) {
		tokens = append(tokens, tok)
		_, err := r.Resolve(ctx, bearer(tok))
		if err == nil {
			t.Fatalf("a token meant to be refused was accepted")
		}
		errs = append(errs, err)
	}

	is := newIssuer(t)
	is.addRSA(t, "k1")
	j := newJWTFor(t, is, sink, nil)
	expired := valid("alice")
	expired.exp, expired.iat = time.Now().Add(-time.Hour), time.Now().Add(-2*time.Hour)
	wrongAud := valid("alice")
	wrongAud.aud = []string{"https://other.example"}
	forger := newIssuer(t)
	fk := forger.addRSA(t, "k1")
	forged := valid("alice")
	forged.iss = is.srv.URL
	try(j, is.token(t, "k1", expired))
	try(j, is.token(t, "k1", wrongAud))
	try(j, sign(t, jose.RS256, "k1", fk, forged))
	try(j, sign(t, jose.RS256, "unknown-kid", fk, forged))
	try(j, "not-a-jwt-3f9c2e7a1b")
	try(j, "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.")

	down := newIssuer(t)
	down.addRSA(t, "k1")
	down.down.Store(true)
	jd := newJWTFor(t, down, sink, nil)
	try(jd, down.token(t, "k1", valid("alice")))

	as := newAuthServer(t)
	in := newIntrospectionFor(t, as, sink, nil)
	try(in, "opaque-inactive-8d7e6f")
	bad := newIntrospectionFor(t, as, sink, func(c *Config) { c.IntrospectionClientSecret = "wrong" })
	try(bad, "opaque-badcreds-1a2b3c")
	as.set("opaque-nouser-4c5d6e", map[string]any{"active": true})
	try(in, "opaque-nouser-4c5d6e")
	as.srv.Close()
	try(in, "opaque-down-9f8e7d")

	logs := sink.String()
	for i, tok := range tokens {
		for _, part := range append([]string{tok}, strings.Split(tok, ".")...) {
			if len(part) < 8 {
				continue
			}
			for _, err := range errs {
				if strings.Contains(err.Error(), part) {
					t.Errorf("token %d: an error holds a part of it: %q", i, err.Error())
				}
				var e *Error
				if errors.As(err, &e) && strings.Contains(e.Description, part) {
					t.Errorf("token %d: a description holds a part of it", i)
				}
			}
			if strings.Contains(logs, part) {
				t.Errorf("token %d: the log holds a part of it:\n%s", i, logs)
			}
		}
	}
	if !strings.Contains(logs, "refused a bearer token") {
		t.Fatal("the refusals were not logged at all; the assertion above proves nothing")
	}
}

func TestDefaultClientRefusesDowngradeRedirect(t *testing.T) {
	from, _ := http.NewRequest(http.MethodGet, "https://idp.example/.well-known/openid-configuration", nil)
	down, _ := http.NewRequest(http.MethodGet, "http://idp.example/jwks", nil)
	if err := checkRedirect(down, []*http.Request{from}); err == nil || !strings.Contains(err.Error(), "must use https") {
		t.Fatalf("checkRedirect(https to http on a remote host) = %v, want a refusal", err)
	}
	ok, _ := http.NewRequest(http.MethodGet, "https://keys.idp.example/jwks", nil)
	if err := checkRedirect(ok, []*http.Request{from}); err != nil {
		t.Fatalf("an https redirect was refused: %v", err)
	}
}

func TestDiscoveryURLsWithIssuerPath(t *testing.T) {
	u, _ := url.Parse("https://idp.example/realms/acme/")
	got := discoveryURLs(u)
	want := []string{
		"https://idp.example/realms/acme/.well-known/openid-configuration",       // OIDC Discovery §4
		"https://idp.example/.well-known/oauth-authorization-server/realms/acme", // RFC 8414 §3.1
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("discoveryURLs = %q, want %q", got, want)
	}
}
