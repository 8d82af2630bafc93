package oauthmeta

import (
	"encoding/json"
	"net/url"
	"strings"
)

// The well-known URI suffixes this package serves: RFC 9728 §3 (protected
// resource metadata), RFC 8414 §3 (authorization server metadata) and
// OpenID Connect Discovery 1.0 §4.
const (
	prmWellKnown  = "/.well-known/oauth-protected-resource"
	asWellKnown   = "/.well-known/oauth-authorization-server"
	oidcWellKnown = "/.well-known/openid-configuration"
)

// MetadataURL returns the RFC 9728 §3.1 well-known URL of the protected
// resource metadata of the resource public (an MCP endpoint URL): the
// well-known suffix goes between the host and the path, the path's terminating
// slash after the host is dropped, a query stays after the path, and a
// fragment or userinfo is dropped.
//
//	https://h/mcp    → https://h/.well-known/oauth-protected-resource/mcp
//	https://h/       → https://h/.well-known/oauth-protected-resource
//	https://h/a/mcp?t=1 → https://h/.well-known/oauth-protected-resource/a/mcp?t=1
//
// It returns "" for nil or a URL without scheme and host.
func MetadataURL(public *url.URL) string {
	if public == nil || public.Scheme == "" || public.Host == "" {
		return ""
	}
	path := public.EscapedPath()
	if path == "/" {
		path = ""
	}
	u := url.URL{Scheme: public.Scheme, Host: public.Host}
	s := u.String() + prmWellKnown + path
	if public.RawQuery != "" {
		s += "?" + public.RawQuery
	}
	return s
}

// resourceID returns public as an RFC 8707 §2 resource identifier: the
// URL without fragment and userinfo.
func resourceID(public *url.URL) string {
	u := *public
	u.Fragment, u.RawFragment, u.User = "", "", nil
	return u.String()
}

// samePath reports whether a request path after the well-known suffix names
// the endpoint path: both with a trailing slash removed, since RFC 9728 §3.1
// drops the slash after the host and the TypeScript SDK drops every trailing
// slash when it builds the URL.
func samePath(suffix, endpoint string) bool {
	return strings.TrimSuffix(suffix, "/") == strings.TrimSuffix(endpoint, "/")
}

// docResource returns a validated document's resource string.
func docResource(doc map[string]json.RawMessage) string {
	var s string
	_ = json.Unmarshal(doc["resource"], &s)
	return s
}

// sameResource reports whether resource, an upstream document's, identifies
// the upstream endpoint up, which the bridge dials. RFC 9728 §3.3 asks for
// the identical URL; like the TypeScript SDK's client the relay accepts a
// resource with the same origin whose path is up's path or a parent of it
// at a segment boundary (a document naming the origin describes every
// endpoint there), with scheme and host compared case-insensitively, the
// default port implied and a trailing slash ignored. Anything else — another
// host, port or scheme, a sibling path, another query — is another resource.
func sameResource(resource string, up *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || up == nil || r.User != nil || r.RawQuery != up.RawQuery || r.Fragment != "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, up.Scheme) || canonicalHost(r) != canonicalHost(up) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	upPath := strings.TrimSuffix(up.EscapedPath(), "/")
	return rp == upPath || strings.HasPrefix(upPath, rp+"/")
}

// canonicalHost is u's host in lower case with the scheme's default port.
func canonicalHost(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}
