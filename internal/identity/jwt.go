package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// JWT is the jwt mode: the bearer token is a JWS-signed JWT verified with
// the issuer's keys; the principal is (iss, sub), the same across refreshed
// tokens. Build it with New.
type JWT struct {
	issuer    string // "" when only a JWKS URL is configured
	audiences []string
	leeway    time.Duration
	algs      []jose.SignatureAlgorithm
	keys      *keySet
	log       *slog.Logger
	now       func() time.Time
}

func newJWT(ctx context.Context, cfg Config) (*JWT, error) {
	if cfg.OIDCIssuer == "" && cfg.JWKSURL == "" {
		return nil, errors.New("--principal jwt needs --oidc-issuer (the token issuer, whose keys are found by discovery) or --jwks-url")
	}
	algs, err := algorithms(cfg.Algorithms)
	if err != nil {
		return nil, err
	}
	j := &JWT{issuer: cfg.OIDCIssuer, audiences: cfg.Audiences, leeway: cfg.Leeway, algs: algs, log: cfg.Logger, now: time.Now}
	ks := &keySet{
		client:   cfg.HTTPClient,
		timeout:  cfg.FetchTimeout,
		interval: cfg.JWKSRefetchInterval,
		maxAge:   cfg.JWKSMaxAge,
		log:      cfg.Logger,
		now:      func() time.Time { return j.now() },
	}
	if ks.interval <= 0 {
		ks.interval = DefaultJWKSRefetchInterval
	}
	if ks.maxAge <= 0 {
		ks.maxAge = DefaultJWKSMaxAge
	}
	fetch := func(ctx context.Context, u string) ([]byte, error) { return getJSON(ctx, cfg.HTTPClient, u) }
	if cfg.OIDCIssuer != "" {
		iu, err := checkURL("--oidc-issuer", cfg.OIDCIssuer)
		if err != nil {
			return nil, err
		}
		if iu.RawQuery != "" || iu.Fragment != "" {
			return nil, fmt.Errorf("--oidc-issuer %q must not have a query or fragment (RFC 8414 §2)", cfg.OIDCIssuer)
		}
		ks.host = iu.Host
		ks.discover = func(ctx context.Context) (string, error) { return discoverJWKS(ctx, fetch, cfg.OIDCIssuer) }
	}
	if cfg.JWKSURL != "" {
		ju, err := checkURL("--jwks-url", cfg.JWKSURL)
		if err != nil {
			return nil, err
		}
		ks.jwksURL, ks.host = cfg.JWKSURL, ju.Host
	}
	j.keys = ks
	if j.issuer == "" {
		cfg.Logger.Warn("jwt mode without --oidc-issuer: tokens of any issuer are accepted when keys from the JWKS verify them; set --oidc-issuer to pin the issuer", "jwks_host", ks.host)
	}
	// Fetch now so the first request does not wait, and so a discovery
	// document naming another issuer stops the bridge at start. An
	// unreachable issuer is not fatal: requests get 503 until it answers.
	_ = ks.refresh(ctx)
	ks.mu.Lock()
	lastErr := ks.lastErr
	ks.mu.Unlock()
	var d *discoveryError
	if errors.As(lastErr, &d) {
		return nil, fmt.Errorf("--oidc-issuer: %s", d.msg)
	}
	return j, nil
}

// Resolve implements Resolver.
func (j *JWT) Resolve(ctx context.Context, req Request) (Principal, error) {
	raw, berr := bearerToken(req.Header)
	if berr != nil {
		return Principal{}, berr
	}
	p, err := j.verify(ctx, raw, req.Audience)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status != 503 {
			j.log.Debug("refused a bearer token", "reason", e.Description)
		}
		return Principal{}, err
	}
	p.Credential = req.Header.Get("Authorization")
	return p, nil
}

// verify checks raw (never put into an error or a log) and returns the
// principal without Credential.
func (j *JWT) verify(ctx context.Context, raw, dialed string) (Principal, error) {
	tok, err := jwt.ParseSigned(raw, j.algs)
	if err != nil {
		var alg *jose.ErrUnexpectedSignatureAlgorithm
		if errors.As(err, &alg) {
			return Principal{}, invalidToken("the token's signing algorithm is not accepted (only " + algNames(j.algs) + ")")
		}
		return Principal{}, invalidToken("the bearer token is not a well-formed signed JWT")
	}
	if len(tok.Headers) != 1 {
		return Principal{}, invalidToken("the bearer token must carry exactly one signature")
	}
	h := tok.Headers[0]
	keys, err := j.keys.lookup(ctx, h.KeyID)
	if err != nil {
		return Principal{}, err
	}
	var claims jwt.Claims
	verified := false
	for i := range keys {
		k := &keys[i]
		if k.Algorithm != "" && k.Algorithm != h.Algorithm {
			continue // RFC 7517 §4.4: the key is pinned to another algorithm
		}
		if tok.Claims(k.Key, &claims) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return Principal{}, invalidToken("the token's signature does not verify with the issuer's keys")
	}
	auds := j.audiences
	if len(auds) == 0 {
		if dialed == "" {
			return Principal{}, errors.New("identity: jwt mode has no audience to check: configure --audience or the bridge's public URL")
		}
		auds = []string{dialed}
	}
	if claims.Expiry == nil {
		return Principal{}, invalidToken("the token has no expiry (exp)")
	}
	if claims.Issuer == "" || claims.Subject == "" {
		return Principal{}, invalidToken("the token lacks an issuer (iss) or a subject (sub)")
	}
	err = claims.ValidateWithLeeway(jwt.Expected{Issuer: j.issuer, AnyAudience: auds, Time: j.now()}, j.leeway)
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return Principal{}, invalidToken("the token was issued by another issuer (iss) than this bridge accepts")
	case errors.Is(err, jwt.ErrInvalidAudience):
		return Principal{}, invalidToken("the token is not meant for this server: its audience (aud) does not include " + strings.Join(auds, " or "))
	case errors.Is(err, jwt.ErrExpired):
		return Principal{}, invalidToken("the token has expired (exp); refresh it")
	case errors.Is(err, jwt.ErrNotValidYet):
		return Principal{}, invalidToken("the token is not valid yet (nbf)")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return Principal{}, invalidToken("the token was issued in the future (iat); check the clocks")
	default:
		return Principal{}, invalidToken("the token's claims are not valid")
	}
	return Principal{ID: sessionmap.PrincipalFromSubject(claims.Issuer, claims.Subject), Expires: claims.Expiry.Time()}, nil
}

func algNames(algs []jose.SignatureAlgorithm) string {
	s := make([]string, len(algs))
	for i, a := range algs {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}
