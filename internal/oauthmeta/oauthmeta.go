// Package oauthmeta makes OAuth discovery work through the bridge: it serves
// the upstream's protected resource metadata (RFC 9728) at the bridge's own
// well-known URIs with `resource` rewritten to the URL the client dialed,
// proxies the 2025-03-26-era authorization server endpoints, and rewrites the
// resource_metadata parameter of relayed WWW-Authenticate challenges so they
// point at the bridge.
//
// # What each MCP revision's client looks for
//
// 2025-03-26: no protected resource metadata. The client takes the MCP
// server's origin (the endpoint URL without its path) as the authorization
// server, fetches /.well-known/oauth-authorization-server there (RFC 8414)
// and, on 404, uses /authorize, /token and /register at that origin. Behind
// the bridge that origin is the bridge's, so these paths must reach the
// upstream's: Config.ProxyAuthServer. The TypeScript SDK still falls back
// to this when a server has no protected resource metadata, and also tries
// /.well-known/openid-configuration there.
//
// 2025-06-18, 2025-11-25 and 2026-07-28: the client reads the
// resource_metadata parameter of the 401's Bearer challenge (RFC 9728 §5.1)
// or, without one, the path-suffixed well-known URI of the endpoint
// (https://h/.well-known/oauth-protected-resource/mcp for https://h/mcp),
// then the root one (https://h/.well-known/oauth-protected-resource). The
// document's `resource` must be the URL the client dialed (RFC 9728 §3.3;
// the TypeScript SDK refuses it with "Protected resource … does not match
// expected …"), so the relay serves the upstream's document with `resource`
// set to the bridge's public endpoint URL and every other member as sent,
// and WriteAuthError points relayed challenges at the bridge's document.
// The authorization servers it names are the upstream's and are reached
// directly. 2026-07-28 clients also check the authorization server
// metadata's `issuer` against the URL they built it from (RFC 8414 §3.3) and
// the authorization response's `iss` (RFC 9207); neither involves the
// bridge, because the relay does not rewrite authorization server metadata.
// The exception is the 2025-03-26 arrangement reached through the proxied
// paths: metadata whose issuer is the upstream's own origin. A client behind
// the bridge builds that issuer from the bridge's origin and go-sdk's checks
// it, so the bridge fronts that authorization server whole (issuer,
// endpoints at the upstream's origin and the authorization response's iss
// name the bridge's origin; asproxy.go).
//
// # Deployment
//
// Clients ask for tokens for the resource they dialed (RFC 8707 `resource`
// parameter, MCP 2025-06-18 and later) and the upstream must accept only
// tokens issued for it. Behind the bridge the resource is the bridge's
// public URL, so the upstream must accept tokens whose audience is that
// URL. The usual deployment makes this hold without configuration: the
// bridge takes over the upstream's public URL (same host and path, DNS or
// the load balancer moved to the bridge), the upstream keeps its audience,
// and the upstream's own challenges may already name that public URL's
// metadata. When the bridge has a URL of its own, add it to the audiences
// the upstream (and its authorization server's resource policy) accepts.
// The bridge forwards the client's token to the one upstream it was issued
// for; that is the gateway pattern, not the token passthrough to other
// APIs the MCP specification forbids.
//
// # Mounting
//
// Mount Relay on every pattern of (*Relay).Patterns, and when the upstream
// refuses a request with 401 or 403 (FromResponse), answer the client with
// (*Relay).RelayAuthError, or WriteAuthError with MetadataURL of the
// bridge's public endpoint URL.
package oauthmeta

import (
	"errors"
	"fmt"
	"net/http"
)

// UpstreamAuthError is an upstream's refusal at the HTTP layer (401 or
// 403). The bridge relays it to the client as the same HTTP status with the
// same challenges (rewritten to point at the bridge), never as HTTP 200 with
// a JSON-RPC error: that is what starts an OAuth client's flow.
type UpstreamAuthError struct {
	// Status is the upstream's HTTP status (401 or 403).
	Status int
	// Challenges are the upstream's WWW-Authenticate values, as sent.
	Challenges []string
	// Method is the upstream request that was refused (for logs).
	Method string
}

func (e *UpstreamAuthError) Error() string {
	return fmt.Sprintf("the upstream refused %s with HTTP %d %s", e.Method, e.Status, http.StatusText(e.Status))
}

// AsUpstreamAuthError reports whether err's chain holds an upstream auth refusal.
func AsUpstreamAuthError(err error) (*UpstreamAuthError, bool) {
	var e *UpstreamAuthError
	ok := errors.As(err, &e)
	return e, ok
}

// FromResponse returns the refusal resp carries, or nil when resp is not a
// 401 or 403.
func FromResponse(resp *http.Response, method string) *UpstreamAuthError {
	if resp == nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return nil
	}
	return &UpstreamAuthError{Status: resp.StatusCode, Challenges: resp.Header.Values("WWW-Authenticate"), Method: method}
}
