package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// discoveryURLs are where an issuer's metadata may be: OpenID Connect
// Discovery 1.0 §4 appends the well-known path to the issuer; RFC 8414 §3.1
// inserts it between the host and the issuer's path.
func discoveryURLs(issuer *url.URL) []string {
	path := strings.TrimSuffix(issuer.EscapedPath(), "/")
	base := issuer.Scheme + "://" + issuer.Host
	return []string{
		base + path + "/.well-known/openid-configuration",
		base + "/.well-known/oauth-authorization-server" + path,
	}
}

// discoverJWKS fetches the issuer's metadata and returns its jwks_uri. A
// document whose issuer is not exactly the configured one is refused (OIDC
// Discovery §4.3, RFC 8414 §3.3): it is someone else's metadata, and its
// keys would let that someone mint tokens the bridge believes.
func discoverJWKS(ctx context.Context, fetch func(context.Context, string) ([]byte, error), issuer string) (string, error) {
	iu, err := url.Parse(issuer)
	if err != nil {
		return "", err
	}
	var errs []error
	for _, u := range discoveryURLs(iu) {
		body, err := fetch(ctx, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			errs = append(errs, fmt.Errorf("%s is not a JSON metadata document", u))
			continue
		}
		if doc.Issuer != issuer {
			return "", &discoveryError{msg: fmt.Sprintf("the metadata at %s names the issuer %q, not the configured --oidc-issuer %q (they must be identical)", u, doc.Issuer, issuer)}
		}
		if doc.JWKSURI == "" {
			return "", &discoveryError{msg: fmt.Sprintf("the metadata at %s has no jwks_uri; give the keys' URL with --jwks-url", u)}
		}
		return doc.JWKSURI, nil
	}
	return "", fmt.Errorf("cannot fetch the issuer's metadata: %w", errors.Join(errs...))
}
