//go:build unix

package authe2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// tokenResponse is an RFC 6749 §5.1/§5.2 answer.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

func postForm(t *testing.T, u string, form url.Values, user, pass string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(user, pass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// The authorization server itself (interop/oauth/as.mjs): discovery,
// client_credentials with a resource indicator → a JWT whose aud is the
// resource and that verifies against the JWKS (go-oidc, ES256), the
// configured short lifetime, invalid_target for a resource that is not a
// loopback MCP endpoint, and RFC 7662 introspection of an opaque token
// (a second server with --token-format opaque).
func TestAuthServer(t *testing.T) {
	t.Parallel()
	as := peers.StartAuthServer(t, peers.AuthServerOptions{AccessTTL: 2 * time.Second, Clients: map[string]string{clientID: clientSecret}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	resp, err := http.Get(as.Issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Issuer                string   `json:"issuer"`
		TokenEndpoint         string   `json:"token_endpoint"`
		JWKSURI               string   `json:"jwks_uri"`
		IntrospectionEndpoint string   `json:"introspection_endpoint"`
		RegistrationEndpoint  string   `json:"registration_endpoint"`
		GrantTypes            []string `json:"grant_types_supported"`
		PKCE                  []string `json:"code_challenge_methods_supported"`
	}
	if err := json.Unmarshal(doc, &meta); err != nil {
		t.Fatalf("discovery: %v", err)
	}
	if meta.Issuer != as.Issuer || meta.TokenEndpoint != as.TokenURL || meta.JWKSURI != as.JWKSURL ||
		meta.IntrospectionEndpoint != as.IntrospectionURL || meta.RegistrationEndpoint == "" {
		t.Fatalf("discovery document %s", doc)
	}
	for _, g := range []string{"client_credentials", "authorization_code", "refresh_token"} {
		if !slices.Contains(meta.GrantTypes, g) {
			t.Errorf("grant_types_supported %v lacks %s", meta.GrantTypes, g)
		}
	}
	if !slices.Equal(meta.PKCE, []string{"S256"}) {
		t.Errorf("code_challenge_methods_supported %v, want [S256]", meta.PKCE)
	}

	resource := "http://127.0.0.1:1/mcp"
	code, body := postForm(t, as.TokenURL, url.Values{"grant_type": {"client_credentials"}, "scope": {"mcp"}, "resource": {resource}}, clientID, clientSecret)
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil || code != http.StatusOK || tr.AccessToken == "" {
		t.Fatalf("client_credentials: HTTP %d %s", code, body)
	}
	if tr.ExpiresIn != 2 || tr.Scope != "mcp" {
		t.Errorf("expires_in %d scope %q, want 2 and mcp", tr.ExpiresIn, tr.Scope)
	}
	v := oidc.NewVerifier(as.Issuer, oidc.NewRemoteKeySet(ctx, as.JWKSURL), &oidc.Config{ClientID: resource, SupportedSigningAlgs: []string{oidc.ES256}})
	tok, err := v.Verify(ctx, tr.AccessToken)
	if err != nil {
		t.Fatalf("the access token does not verify for aud %s: %v", resource, err)
	}
	if tok.Subject != clientID {
		t.Errorf("sub %q, want the client id %s", tok.Subject, clientID)
	}
	other := oidc.NewVerifier(as.Issuer, oidc.NewRemoteKeySet(ctx, as.JWKSURL), &oidc.Config{ClientID: "http://127.0.0.1:2/mcp", SupportedSigningAlgs: []string{oidc.ES256}})
	if _, err := other.Verify(ctx, tr.AccessToken); err == nil {
		t.Error("the token verified for another audience")
	}

	code, body = postForm(t, as.TokenURL, url.Values{"grant_type": {"client_credentials"}, "scope": {"mcp"}, "resource": {"https://example.com/mcp"}}, clientID, clientSecret)
	if err := json.Unmarshal(body, &tr); err != nil || code != http.StatusBadRequest || tr.Error != "invalid_target" {
		t.Errorf("a foreign resource: HTTP %d %s, want 400 invalid_target", code, body)
	}

	opaque := peers.StartAuthServer(t, peers.AuthServerOptions{Opaque: true, Clients: map[string]string{clientID: clientSecret}})
	code, body = postForm(t, opaque.IntrospectionURL, url.Values{"token": {freshToken(t, opaque, resource)}}, clientID, clientSecret)
	var intro struct {
		Active   bool   `json:"active"`
		ClientID string `json:"client_id"`
		Aud      any    `json:"aud"`
	}
	if err := json.Unmarshal(body, &intro); err != nil || code != http.StatusOK || !intro.Active || intro.ClientID != clientID || intro.Aud != resource {
		// A client_credentials token's introspection has client_id and no sub.
		t.Errorf("introspection: HTTP %d %s, want active with client_id %s and aud %s", code, body, clientID, resource)
	}
}

// freshToken gets a fresh client_credentials token for resource.
func freshToken(t *testing.T, as *peers.AuthServer, resource string) string {
	t.Helper()
	code, body := postForm(t, as.TokenURL, url.Values{"grant_type": {"client_credentials"}, "scope": {"mcp"}, "resource": {resource}}, clientID, clientSecret)
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil || code != http.StatusOK {
		t.Fatalf("client_credentials: HTTP %d %s", code, body)
	}
	return tr.AccessToken
}
