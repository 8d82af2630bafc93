package router

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
)

// newEdge builds the request edge of cfg: every /mcp request passes it
// first, on all four paths (route.go).
func newEdge(cfg Config, relay *oauthmeta.Relay) (*edge.Edge, error) {
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
		Relay:              relay,
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
	if mu == "" {
		return nil
	}
	er.LearnChallenges(vs)
	out, _ := oauthmeta.RewriteChallenges(vs, mu)
	resp.Header["Www-Authenticate"] = out
	return nil
}

// metadataURL is the bridge's protected resource metadata URL for its
// public endpoint URL (oauthmeta.MetadataURL: the RFC 9728 §3.1
// path-suffixed well-known URI); "" for a URL that does not parse.
func metadataURL(public string) string {
	u, err := url.Parse(public)
	if err != nil || u.Host == "" {
		return ""
	}
	return oauthmeta.MetadataURL(u)
}
