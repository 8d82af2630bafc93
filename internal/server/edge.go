package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tasksbridge/tasksbridge/internal/edge"
)

// newEdge builds the request edge of cfg: every /mcp request passes it
// first, on all four paths (route.go).
func newEdge(cfg Config) (*edge.Edge, error) {
	hosts, err := edge.ParseHosts(cfg.AllowedHosts)
	if err != nil {
		return nil, err
	}
	origins, err := edge.ParseOrigins(cfg.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	proxies, err := edge.ParseTrustedProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("public URL %q: give the endpoint's absolute http(s) URL, e.g. https://mcp.example.com/mcp", cfg.PublicURL)
		}
	}
	var idh []string
	if cfg.IdentityHeader != "" {
		idh = []string{cfg.IdentityHeader}
	}
	return edge.New(edge.Config{
		Policy:             edge.Policy{AllowedHosts: hosts, AllowedOrigins: origins},
		TrustedProxies:     proxies,
		IdentityHeaders:    idh,
		PublicURL:          cfg.PublicURL,
		Resolver:           cfg.Resolver,
		NoForwardedHeaders: cfg.NoForwardedHeaders,
		MaxBodyBytes:       cfg.MaxBodyBytes,
		MetadataURL:        metadataURL,
		Logger:             cfg.Logger,
	})
}

// forwardTransport adds the edge request's ForwardHeader (trace headers,
// X-Forwarded-*) to the translated paths' upstream requests that are made
// within a client request's context, without overriding a header the
// caller set (the legacy face sets them through CallOptions.Header).
type forwardTransport struct{ next http.RoundTripper }

func (t forwardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	er, ok := edge.FromContext(req.Context())
	if !ok {
		return t.next.RoundTrip(req)
	}
	var out *http.Request
	for k, vs := range er.ForwardHeader() {
		if _, set := req.Header[k]; set {
			continue
		}
		if out == nil {
			out = req.Clone(req.Context()) // RoundTrip must not change its request
		}
		out.Header[k] = vs
	}
	if out == nil {
		out = req
	}
	return t.next.RoundTrip(out)
}

// modifyResponse is the passthrough's ReverseProxy.ModifyResponse: an
// upstream's 401 or 403 reaches the client with its status, its challenges'
// error and scope kept, and resource_metadata pointing at the bridge's own
// protected resource metadata (RFC 9728 §5.1), where the relay serves the
// upstream's with the bridge's public URL as resource.
func modifyResponse(resp *http.Response) error {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return nil
	}
	er, ok := edge.FromContext(resp.Request.Context())
	if !ok {
		return nil
	}
	vs := resp.Header.Values("WWW-Authenticate")
	if len(vs) == 0 {
		return nil
	}
	mu := metadataURL(er.PublicURL())
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = rewriteChallenge(v, mu)
	}
	resp.Header["Www-Authenticate"] = out
	return nil
}

// metadataURL is the bridge's protected resource metadata URL for its
// public endpoint URL: the RFC 9728 §3.1 path-suffixed well-known URI
// (https://h/mcp → https://h/.well-known/oauth-protected-resource/mcp).
// MERGE: becomes oauthmeta.MetadataURL once that package has it.
func metadataURL(public string) string {
	u, err := url.Parse(public)
	if err != nil || u.Host == "" {
		return ""
	}
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	return u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + p
}

// rewriteChallenge returns a WWW-Authenticate value with the value of its
// resource_metadata auth-param (RFC 9110 §11.2, RFC 9728 §5.1) replaced by
// metadataURL; a value without one, or metadataURL "", is returned
// unchanged. Quoted strings are skipped whole, so a parameter name inside an
// error_description is not one.
// MERGE: becomes oauthmeta.RewriteChallenge once that package has it.
func rewriteChallenge(value, metadataURL string) string {
	if metadataURL == "" {
		return value
	}
	isTchar := func(c byte) bool {
		return c > ' ' && c < 0x7f && !strings.ContainsRune("\"(),/:;<=>?@[\\]{}", rune(c))
	}
	skipWS := func(i int) int {
		for i < len(value) && (value[i] == ' ' || value[i] == '\t') {
			i++
		}
		return i
	}
	for i := 0; i < len(value); {
		switch c := value[i]; {
		case c == '"': // a quoted string: skip it whole
			i++
			for i < len(value) && value[i] != '"' {
				if value[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case isTchar(c):
			start := i
			for i < len(value) && isTchar(value[i]) {
				i++
			}
			name := value[start:i]
			j := skipWS(i)
			if j >= len(value) || value[j] != '=' || !strings.EqualFold(name, "resource_metadata") {
				continue
			}
			j = skipWS(j + 1)
			end := j
			if end < len(value) && value[end] == '"' {
				end++
				for end < len(value) && value[end] != '"' {
					if value[end] == '\\' {
						end++
					}
					end++
				}
				end = min(end+1, len(value))
			} else {
				for end < len(value) && isTchar(value[end]) || end < len(value) && strings.IndexByte("/:?@", value[end]) >= 0 {
					end++
				}
			}
			return value[:j] + `"` + metadataURL + `"` + value[end:]
		default:
			i++
		}
	}
	return value
}
