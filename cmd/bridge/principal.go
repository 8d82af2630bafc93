package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/internal/identity"
)

// edgeFlags are the flags of the request edge: who a request is (the
// principal), which proxies are believed, which Host and Origin are
// accepted, and the URL clients dial.
func edgeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "principal", Value: identity.ModeAuthorization, Usage: "who owns a request's sessions and tasks: authorization (a hash of the whole Authorization header), " +
			"jwt (the verified bearer JWT's issuer and subject; needs --oidc-issuer or --jwks-url), introspection (an opaque token checked at --introspection-url, RFC 7662), " +
			"header:NAME (the user a --trusted-proxy gateway put into header NAME) or mtls (the verified client certificate's subject)", EnvVars: []string{"TASKSBRIDGE_PRINCIPAL"}},
		&cli.StringFlag{Name: "oidc-issuer", Usage: "with --principal jwt: the token issuer (`URL`); its keys are found through its OpenID/OAuth discovery document", EnvVars: []string{"TASKSBRIDGE_OIDC_ISSUER"}},
		&cli.StringSliceFlag{Name: "jwt-algorithms", Usage: "with --principal jwt: the accepted signature algorithms (repeatable or comma-separated; default RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA; none and HS* are never accepted)", EnvVars: []string{"TASKSBRIDGE_JWT_ALGORITHMS"}},
		&cli.StringFlag{Name: "jwks-url", Usage: "with --principal jwt: the issuer's JSON Web Key Set (`URL`), instead of discovering it from --oidc-issuer", EnvVars: []string{"TASKSBRIDGE_JWKS_URL"}},
		&cli.StringSliceFlag{Name: "audience", Usage: "with --principal jwt or introspection: an accepted token audience (repeatable or comma-separated; default: the bridge's public URL, see --public-url)", EnvVars: []string{"TASKSBRIDGE_AUDIENCE"}},
		&cli.StringFlag{Name: "introspection-url", Usage: "with --principal introspection: the authorization server's token introspection endpoint (`URL`)", EnvVars: []string{"TASKSBRIDGE_INTROSPECTION_URL"}},
		&cli.StringFlag{Name: "introspection-client-id", Usage: "with --principal introspection: the bridge's client id at the introspection endpoint", EnvVars: []string{"TASKSBRIDGE_INTROSPECTION_CLIENT_ID"}},
		&cli.StringFlag{Name: "introspection-client-secret-file", Usage: "with --principal introspection: a file (`PATH`) holding the bridge's client secret (or set TASKSBRIDGE_INTROSPECTION_CLIENT_SECRET to the secret itself)", EnvVars: []string{"TASKSBRIDGE_INTROSPECTION_CLIENT_SECRET_FILE"}},
		&cli.StringSliceFlag{Name: "trusted-proxy", Usage: "a reverse proxy or gateway whose X-Forwarded-For/-Proto/-Host, Forwarded and --principal header:NAME headers are believed (`CIDR`, or an address; repeatable or comma-separated); from any other peer these headers are deleted", EnvVars: []string{"TASKSBRIDGE_TRUSTED_PROXIES"}},
		&cli.StringSliceFlag{Name: "allowed-host", Usage: "a Host header accepted besides loopback names (`HOST[:PORT]`; repeatable or comma-separated; no \"*\"): set it when clients reach a loopback listener through a name (a proxy on the same machine); once set, other Host names are refused on every listener", EnvVars: []string{"TASKSBRIDGE_ALLOWED_HOSTS"}},
		&cli.StringFlag{Name: "public-url", Usage: "the /mcp URL clients dial (`URL`, e.g. https://mcp.example.com/mcp): token audience and base of the bridge's OAuth metadata URL; default: derived from each request (scheme, Host, or a trusted proxy's X-Forwarded-Proto/-Host)", EnvVars: []string{"TASKSBRIDGE_PUBLIC_URL"}},
		&cli.BoolFlag{Name: "no-forwarded-headers", Usage: "do not add X-Forwarded-For, -Proto and -Host to upstream requests (traceparent, tracestate and X-Request-Id are passed on regardless)", EnvVars: []string{"TASKSBRIDGE_NO_FORWARDED_HEADERS"}},
		&cli.BoolFlag{Name: "oauth-proxy-auth-server", Value: true, Usage: "also proxy the upstream's 2025-03-26-era authorization server endpoints (/.well-known/oauth-authorization-server, /authorize, /token, /register, and the endpoints of an upstream that is its own authorization server, which the bridge then fronts as issuer) for clients that look for them at the bridge; --oauth-proxy-auth-server=false turns that off", EnvVars: []string{"TASKSBRIDGE_OAUTH_PROXY_AUTH_SERVER"}},
	}
}

// principalSettings is what the --principal flags say.
type principalSettings struct {
	Mode             string // identity.Mode*, "header" for header:NAME
	Header           string // NAME of header:NAME
	OIDCIssuer       string
	JWKSURL          string
	Audiences        []string
	Algorithms       []string
	IntrospectionURL string
	ClientID         string
	ClientSecret     string
	TrustedProxies   bool // any --trusted-proxy given
	Logger           *slog.Logger
}

// readPrincipalFlags reads and checks the --principal flags.
func readPrincipalFlags(c *cli.Context) (principalSettings, error) {
	p := principalSettings{
		Mode:             strings.TrimSpace(c.String("principal")),
		OIDCIssuer:       c.String("oidc-issuer"),
		JWKSURL:          c.String("jwks-url"),
		IntrospectionURL: c.String("introspection-url"),
		ClientID:         c.String("introspection-client-id"),
		TrustedProxies:   len(c.StringSlice("trusted-proxy")) > 0,
	}
	for _, a := range c.StringSlice("jwt-algorithms") {
		for _, s := range strings.Split(a, ",") {
			if s = strings.TrimSpace(s); s != "" {
				p.Algorithms = append(p.Algorithms, s)
			}
		}
	}
	for _, a := range c.StringSlice("audience") {
		for _, s := range strings.Split(a, ",") {
			if s = strings.TrimSpace(s); s != "" {
				p.Audiences = append(p.Audiences, s)
			}
		}
	}
	if name, ok := strings.CutPrefix(p.Mode, identity.ModeHeader+":"); ok {
		if !validHeaderName(name) {
			return p, fmt.Errorf("--principal %q: give header:NAME with an HTTP header name, e.g. header:X-Forwarded-User", p.Mode)
		}
		if !p.TrustedProxies {
			return p, fmt.Errorf("--principal %s believes the header only from a --trusted-proxy; name the gateway's address with --trusted-proxy CIDR", p.Mode)
		}
		p.Mode, p.Header = identity.ModeHeader, http.CanonicalHeaderKey(name)
	}
	switch p.Mode {
	case identity.ModeAuthorization, identity.ModeJWT, identity.ModeIntrospection, identity.ModeHeader, identity.ModeMTLS:
	default:
		return p, fmt.Errorf("--principal %q: want authorization, jwt, introspection, header:NAME or mtls", p.Mode)
	}
	if (p.Mode == identity.ModeJWT || p.Mode == identity.ModeIntrospection) && len(p.Audiences) == 0 &&
		c.String("public-url") == "" && len(c.StringSlice("allowed-host")) == 0 {
		// The default audience is the URL the client dialed; without a fixed
		// public URL or a list of Host names, the client would choose it.
		return p, fmt.Errorf("--principal %s checks each token's audience against the bridge's public URL: set --public-url "+
			"(e.g. https://mcp.example.com/mcp), or --audience, or --allowed-host so that clients cannot choose it with their Host header", p.Mode)
	}
	if f := c.String("introspection-client-secret-file"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return p, fmt.Errorf("--introspection-client-secret-file: %w", err)
		}
		p.ClientSecret = strings.TrimSpace(string(b))
	} else {
		p.ClientSecret = os.Getenv("TASKSBRIDGE_INTROSPECTION_CLIENT_SECRET")
	}
	return p, nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// newResolver returns the identity.Resolver of p. The authorization mode
// is built here; the others come from the identity package.
func newResolver(ctx context.Context, p principalSettings) (identity.Resolver, error) {
	if p.Mode == identity.ModeAuthorization {
		return identity.AuthorizationHeader{}, nil
	}
	return identityNew(ctx, p)
}

// identityNew builds the jwt, introspection, header and mtls resolvers
// (internal/identity). In jwt mode it fetches the issuer's keys once; an
// unreachable issuer is logged and answered with 503 until it answers.
func identityNew(ctx context.Context, p principalSettings) (identity.Resolver, error) {
	mode := p.Mode
	if mode == identity.ModeHeader {
		mode = identity.ModeHeader + ":" + p.Header
	}
	return identity.New(ctx, identity.Config{
		Mode:                      mode,
		OIDCIssuer:                p.OIDCIssuer,
		JWKSURL:                   p.JWKSURL,
		Audiences:                 p.Audiences,
		Algorithms:                p.Algorithms,
		IntrospectionURL:          p.IntrospectionURL,
		IntrospectionClientID:     p.ClientID,
		IntrospectionClientSecret: p.ClientSecret,
		Logger:                    p.Logger,
	})
}
