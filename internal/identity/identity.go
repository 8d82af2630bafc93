// Package identity resolves the principal a request acts for: who owns the
// sessions and tasks it creates and may see (L-79, L-80, M-65). The edge
// (internal/edge) calls one Resolver per request, after the trusted-proxy
// policy has filtered the headers; the faces only ever see the result.
// New builds the Resolver of a Config; an *Error it returns is a refusal the
// edge answers with its status and an RFC 6750 §3 challenge.
//
// Modes (bridge serve --principal):
//
//   - authorization (the default): a hash of the whole Authorization header
//     (static API keys; a refreshed OAuth token is a new principal). Any
//     value is accepted (the upstream judges it); none is anonymous ("").
//
//   - jwt: a verified bearer JWT (RFC 7519, RFC 9068); the principal is
//     sessionmap.PrincipalFromSubject(iss, sub), so it survives token
//     refresh. Keys come from --oidc-issuer discovery
//     (/.well-known/openid-configuration, then RFC 8414's
//     /.well-known/oauth-authorization-server; the document's issuer must
//     equal the configured one) or from --jwks-url. Checks: signature with
//     an asymmetric algorithm (default DefaultAlgorithms; HS* and none are
//     refused even when configured), iss exactly --oidc-issuer, aud contains
//     one of --audience (default: the URL the client dialed, RFC 8707), exp
//     required, exp/nbf/iat with DefaultLeeway (30 s). Keys are cached: an
//     unknown kid refetches at most once per DefaultJWKSRefetchInterval (30
//     s; concurrent callers share the fetch), keys older than
//     DefaultJWKSMaxAge (10 min) are refreshed in the background, and an
//     unreachable issuer leaves the cached keys in use. With no keys at all
//     requests get 503 with Retry-After.
//
//   - introspection: an opaque token checked with the RFC 7662 endpoint
//     --introspection-url, the bridge authenticating with HTTP Basic
//     (--introspection-client-id/-secret). The principal is
//     PrincipalFromSubject(iss, or the endpoint URL; sub, or username); an
//     active answer naming no user is refused. aud is checked when the
//     answer has one. Answers are cached by the token's SHA-256 for at most
//     DefaultIntrospectionCacheTTL (60 s) and never past exp, at most
//     DefaultIntrospectionCacheSize entries (LRU). Endpoint down: 503.
//
//   - header:NAME: the identity a trusted gateway put into header NAME,
//     believed only from --trusted-proxy peers (Request.TrustedPeer); the
//     principal is PrincipalFromGatewayUser(NAME, value). Absent (or from an
//     untrusted peer) is anonymous, not 401: see GatewayHeader.
//
//   - mtls: the verified client certificate's subject
//     (PrincipalFromMTLSSubject); no verified certificate is 401.
//
// In every mode Principal.Credential is the Authorization header as sent,
// forwarded to the upstream. Principal IDs are hex digests with a per-mode
// domain prefix (sessionmap.PrincipalFrom*): no raw token or subject
// reaches a log, a label, an audit record, a cache key or a store key.
package identity

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Principal is who one request acts for.
type Principal struct {
	// ID is the store's principal (sessionmap.Scope.Principal): "" when the
	// request carried no credential and the mode allows that.
	ID string
	// Credential is the request's Authorization header value as the client
	// sent it: forwarded to the upstream, which validates it too (the
	// gateway pattern: same public URL, same audience). "" when none.
	Credential string
	// Expires is when Credential stops being valid (a JWT's exp, an
	// introspection answer's exp); zero when unknown.
	Expires time.Time
}

// Request is what a Resolver sees of an HTTP request. Header has already
// been filtered by the edge: identity headers from untrusted peers are gone.
type Request struct {
	Header http.Header
	// TLS is the connection state (client certificates), nil over plain HTTP.
	TLS *tls.ConnectionState
	// TrustedPeer reports whether the direct peer is a --trusted-proxy.
	TrustedPeer bool
	// Audience is the URL of the MCP endpoint this request dialed (the
	// bridge's public URL): the default accepted token audience (RFC 8707).
	Audience string
}

// Resolver decides a request's principal. An error that is an *Error is a
// refusal the edge answers with its status and challenge; any other error
// is the bridge's own fault (HTTP 500).
type Resolver interface {
	Resolve(ctx context.Context, req Request) (Principal, error)
}

// Error is a refusal of a request's credentials (RFC 6750 §3).
type Error struct {
	// Status is 400 (a malformed request: invalid_request, e.g. two
	// Authorization headers), 401 (missing, invalid or expired token), 403
	// (insufficient scope) or 503 (keys or introspection unavailable right
	// now).
	Status int
	// Code is the RFC 6750 error code for the challenge ("invalid_token",
	// "invalid_request", "insufficient_scope"), "" for a bare challenge.
	Code string
	// Description is error_description: plain words a person can act on,
	// never the token or the subject.
	Description string
	// RetryAfter is set with 503.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Description != "" {
		return e.Description
	}
	return http.StatusText(e.Status)
}

// Mode names, as --principal takes them (header mode is "header:NAME").
const (
	ModeAuthorization = "authorization"
	ModeJWT           = "jwt"
	ModeIntrospection = "introspection"
	ModeHeader        = "header"
	ModeMTLS          = "mtls"
)

// AuthorizationHeader is the authorization mode: the principal is a hash of
// the Authorization header value; any value is accepted (the upstream
// judges it), none is the anonymous principal "".
type AuthorizationHeader struct{}

// Resolve implements Resolver.
func (AuthorizationHeader) Resolve(_ context.Context, req Request) (Principal, error) {
	a := strings.TrimSpace(req.Header.Get("Authorization"))
	return Principal{ID: sessionmap.PrincipalFromAuthorization(a), Credential: req.Header.Get("Authorization")}, nil
}
