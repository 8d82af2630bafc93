package identity_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/identity"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Keyed principals: every mode's principal is its plain hash keyed with the
// store's principal key (HMAC-SHA-256), so the same credential gives
// another principal under another key, and none shows the credential.
// Before, the principal was the plain SHA-256, which anyone holding an
// audit log could test guesses against.
func TestKeyedResolver(t *testing.T) {
	ctx := context.Background()
	k1, k2 := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))
	const authz = "Basic dXNlcjpodW50ZXIy" // user:hunter2
	req := identity.Request{Header: http.Header{"Authorization": {authz}}}
	p1, err := identity.Keyed(nil, k1).Resolve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := identity.Keyed(identity.AuthorizationHeader{}, k2).Resolve(ctx, req)
	plain := sessionmap.PrincipalFromAuthorization(authz)
	if p1.ID == plain || p1.ID == p2.ID || p1.ID != sessionmap.KeyPrincipal(k1, plain) ||
		strings.Contains(p1.ID, "dXNlcjpodW50ZXIy") || strings.Contains(p1.ID, "hunter2") {
		t.Fatalf("keyed principals %q / %q (plain %q)", p1.ID, p2.ID, plain)
	}
	if p1.Credential != authz {
		t.Fatalf("the forwarded credential changed: %q", p1.Credential)
	}
	// Anonymous stays anonymous.
	if p, _ := identity.Keyed(nil, k1).Resolve(ctx, identity.Request{Header: http.Header{}}); p.ID != "" {
		t.Fatalf("anonymous request keyed to %q", p.ID)
	}
	// mtls is keyed the same way (one wrapper for every mode).
	leaf := &x509.Certificate{Subject: pkix.Name{CommonName: "client-b"}}
	mreq := identity.Request{Header: http.Header{}, TLS: &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}},
		PeerCertificates: []*x509.Certificate{leaf}}}
	pm, err := identity.Keyed(identity.MTLS{}, k1).Resolve(ctx, mreq)
	if err != nil || pm.ID != sessionmap.KeyPrincipal(k1, sessionmap.PrincipalFromMTLSSubject(leaf.Subject.String())) {
		t.Fatalf("mtls keyed = %q, %v", pm.ID, err)
	}
	// No key: unchanged (a store that keeps none).
	if p, _ := identity.Keyed(identity.AuthorizationHeader{}, nil).Resolve(ctx, req); p.ID != plain {
		t.Fatalf("no key: %q, want the plain hash", p.ID)
	}
}
