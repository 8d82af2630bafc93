package identity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Defaults for Config's zero fields.
const (
	// DefaultLeeway is the clock skew allowed on exp, nbf and iat. RFC 7519
	// §4.1.4 asks for "a small leeway, usually no more than a few minutes";
	// 30 s covers NTP-synchronised hosts with room to spare while keeping
	// the window in which an expired token still works short (a client whose
	// token expired refreshes it anyway, so a longer leeway buys nothing).
	DefaultLeeway = 30 * time.Second
	// DefaultJWKSRefetchInterval is the least time between two fetches of
	// the issuer's keys: a token with an unknown kid (key rotation) triggers
	// at most one fetch per interval, so forged kids cannot turn the bridge
	// into a load generator against the issuer.
	DefaultJWKSRefetchInterval = 30 * time.Second
	// DefaultJWKSMaxAge is how old the cached keys may get before the next
	// request refreshes them in the background (a key the issuer withdrew
	// stops working within this time).
	DefaultJWKSMaxAge = 10 * time.Minute
	// DefaultIntrospectionCacheTTL bounds how long an introspection answer
	// is reused (never past the token's exp): a revoked token keeps working
	// for at most this long.
	DefaultIntrospectionCacheTTL = 60 * time.Second
	// DefaultIntrospectionCacheSize bounds the introspection cache (entries).
	DefaultIntrospectionCacheSize = 10000
	// DefaultFetchTimeout bounds one discovery, JWKS or introspection call.
	DefaultFetchTimeout = 10 * time.Second
)

// DefaultAlgorithms are the JWS algorithms jwt mode accepts by default: the
// asymmetric ones. HS* (a shared secret the bridge does not have, and the
// classic confusion attack of an HMAC keyed with the public key) and none
// are never accepted (RFC 8725 §2.1, §3.1).
var DefaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Config configures New. Only the fields of the chosen Mode matter.
type Config struct {
	// Mode is --principal: "authorization" (default when empty), "jwt",
	// "introspection", "header:NAME" or "mtls".
	Mode string

	// OIDCIssuer (jwt mode) is the issuer whose tokens are accepted: iss must
	// equal it exactly, and its keys are found by discovery
	// (/.well-known/openid-configuration, then the RFC 8414
	// /.well-known/oauth-authorization-server) unless JWKSURL is set.
	OIDCIssuer string
	// JWKSURL (jwt mode) is where the issuer's keys are; overrides discovery.
	// Alone (without OIDCIssuer) any iss is accepted from tokens these keys
	// signed; the principal still includes iss.
	JWKSURL string
	// Audiences are the accepted token audiences (jwt and introspection
	// modes): aud must contain one of them. Empty: the URL the client dialed
	// (Request.Audience), as RFC 8707 resource indicators make it.
	Audiences []string
	// Leeway is the clock skew allowed on exp, nbf and iat; 0 means
	// DefaultLeeway, negative means none.
	Leeway time.Duration
	// Algorithms restricts the accepted JWS algorithms to a subset of
	// DefaultAlgorithms; empty means DefaultAlgorithms.
	Algorithms []string
	// JWKSRefetchInterval is the least time between two key fetches; 0 means
	// DefaultJWKSRefetchInterval.
	JWKSRefetchInterval time.Duration
	// JWKSMaxAge is when cached keys are refreshed in the background; 0
	// means DefaultJWKSMaxAge.
	JWKSMaxAge time.Duration

	// IntrospectionURL (introspection mode) is the RFC 7662 endpoint.
	IntrospectionURL string
	// IntrospectionClientID and IntrospectionClientSecret authenticate the
	// bridge to the endpoint (HTTP Basic, RFC 7662 §2.1, RFC 6749 §2.3.1).
	IntrospectionClientID     string
	IntrospectionClientSecret string
	// IntrospectionCacheTTL bounds how long one answer is reused; 0 means
	// DefaultIntrospectionCacheTTL, negative disables the cache.
	IntrospectionCacheTTL time.Duration
	// IntrospectionCacheSize bounds the cache; 0 means
	// DefaultIntrospectionCacheSize.
	IntrospectionCacheSize int

	// HTTPClient makes discovery, JWKS and introspection calls; nil means a
	// client with DefaultFetchTimeout.
	HTTPClient *http.Client
	// FetchTimeout bounds one outgoing call; 0 means DefaultFetchTimeout.
	FetchTimeout time.Duration
	// Logger receives key state changes (WARN/INFO) and refusals (DEBUG);
	// never a token or a subject. nil discards.
	Logger *slog.Logger
}

// New returns the Resolver for cfg.Mode. In jwt mode with OIDCIssuer it
// fetches the discovery document (refusing one whose issuer differs) and
// the keys; when the issuer cannot be reached it logs a warning and retries
// on demand (requests get 503 until it answers), so the bridge can start
// while its identity provider is down.
func New(ctx context.Context, cfg Config) (Resolver, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: DefaultFetchTimeout, CheckRedirect: checkRedirect}
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = DefaultFetchTimeout
	}
	switch {
	case cfg.Leeway == 0:
		cfg.Leeway = DefaultLeeway
	case cfg.Leeway < 0:
		cfg.Leeway = 0
	}
	for _, a := range cfg.Audiences {
		if strings.TrimSpace(a) == "" {
			return nil, errors.New("--audience has an empty value: give the URL clients use to reach the bridge, or leave --audience out to accept that URL")
		}
	}
	mode, arg, _ := strings.Cut(strings.TrimSpace(cfg.Mode), ":")
	switch strings.ToLower(mode) {
	case "", ModeAuthorization:
		if arg != "" {
			return nil, fmt.Errorf("--principal %q: authorization mode takes no argument", cfg.Mode)
		}
		return AuthorizationHeader{}, nil
	case ModeJWT:
		if arg != "" {
			return nil, fmt.Errorf("--principal %q: jwt mode takes no argument (use --oidc-issuer or --jwks-url)", cfg.Mode)
		}
		return newJWT(ctx, cfg)
	case ModeIntrospection:
		if arg != "" {
			return nil, fmt.Errorf("--principal %q: introspection mode takes no argument (use --introspection-url)", cfg.Mode)
		}
		return newIntrospection(cfg)
	case ModeHeader:
		return newHeader(arg, cfg)
	case ModeMTLS:
		if arg != "" {
			return nil, fmt.Errorf("--principal %q: mtls mode takes no argument", cfg.Mode)
		}
		return MTLS{}, nil
	default:
		return nil, fmt.Errorf("--principal %q is not a mode: use authorization, jwt, introspection, header:NAME or mtls", cfg.Mode)
	}
}

// algorithms resolves Config.Algorithms against the accepted set.
func algorithms(names []string) ([]jose.SignatureAlgorithm, error) {
	if len(names) == 0 {
		names = DefaultAlgorithms
	}
	out := make([]jose.SignatureAlgorithm, 0, len(names))
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case strings.EqualFold(n, "none"):
			return nil, errors.New(`--jwt-algorithms: "none" (an unsigned token) is never accepted`)
		case len(n) >= 2 && strings.EqualFold(n[:2], "HS"):
			return nil, fmt.Errorf("--jwt-algorithms: %s is a shared-secret (HMAC) algorithm and is never accepted: a resource server verifies with the issuer's public keys; use %s", n, strings.Join(DefaultAlgorithms, ", "))
		}
		ok := false
		for _, d := range DefaultAlgorithms {
			if n == d {
				ok = true
				break
			}
		}
		if !ok {
			return nil, fmt.Errorf("--jwt-algorithms: %q is not an accepted algorithm; use some of %s", n, strings.Join(DefaultAlgorithms, ", "))
		}
		out = append(out, jose.SignatureAlgorithm(n))
	}
	return out, nil
}

// checkURL accepts an absolute https URL, or http to a loopback host (local
// development and tests); what is fetched from it decides who may log in,
// and the introspection call carries the bridge's client secret.
func checkURL(flag, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("%s %q is not an absolute http(s) URL", flag, raw)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("%s %q must use https (plain http is only accepted to a loopback host)", flag, raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s must not carry credentials in the URL", flag)
	}
	return u, nil
}

// checkRedirect holds redirects to the rules of checkURL: a discovery, JWKS
// or introspection call must not be downgraded to plain http on the way.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	_, err := checkURL("a redirect", req.URL.String())
	return err
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// bearerToken returns the token of an "Authorization: Bearer …" header
// (scheme case-insensitive, RFC 7235 §2.1). A missing header or another
// scheme is a request without bearer credentials: the bare challenge of
// RFC 6750 §3.1.
func bearerToken(h http.Header) (token string, err *Error) {
	v := strings.TrimSpace(h.Get("Authorization"))
	scheme, tok, _ := strings.Cut(v, " ")
	if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", &Error{Status: http.StatusUnauthorized, Description: "this endpoint requires a bearer token"}
	}
	if len(h.Values("Authorization")) > 1 {
		return "", &Error{Status: http.StatusBadRequest, Code: "invalid_request", Description: "the request has more than one Authorization header"}
	}
	return strings.TrimSpace(tok), nil
}

func invalidToken(desc string) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Description: desc}
}

func unavailable(desc string, retry time.Duration) *Error {
	if retry < time.Second {
		retry = time.Second
	}
	return &Error{Status: http.StatusServiceUnavailable, Description: desc, RetryAfter: retry.Round(time.Second)}
}

// canonicalHeader validates a header:NAME argument.
func canonicalHeader(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", errors.New("--principal header:NAME needs the header's name, e.g. header:X-Forwarded-User")
	}
	for _, c := range name {
		if !(c == '-' || c == '_' || c == '.' || c == '!' || c == '#' || c == '$' || c == '%' || c == '&' || c == '\'' ||
			c == '*' || c == '+' || c == '^' || c == '`' || c == '|' || c == '~' ||
			(c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			return "", fmt.Errorf("--principal header:%s: %q is not a valid HTTP header name", name, name)
		}
	}
	c := textproto.CanonicalMIMEHeaderKey(name)
	if c == "Authorization" {
		return "", errors.New("--principal header:Authorization: use --principal authorization (or jwt) for the Authorization header")
	}
	return c, nil
}
