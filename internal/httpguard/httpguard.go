// Package httpguard holds the HTTP front-door checks every listener of the
// bridge applies: Origin validation and DNS-rebinding protection for
// loopback listeners.
package httpguard

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// OriginPolicy says which Origin header values a listener accepts besides
// a missing Origin (non-browser clients) and loopback http(s) origins, which
// are always accepted. The listeners differ on purpose (M-43, MCP
// 2025-11-25 transports: an invalid Origin MUST get 403), so the extras are
// opt-in rather than one fixed rule.
type OriginPolicy struct {
	// Allowed are exact Origin values accepted.
	Allowed []string
	// Wildcard makes an entry "*" in Allowed accept any Origin. Without it
	// "*" is only an (impossible) exact value.
	Wildcard bool
	// SameHost accepts an http(s) Origin whose host[:port] equals the
	// request's Host header (case-insensitively): the page was served by
	// this very listener.
	SameHost bool
}

// OriginAllowed reports whether origin (the request's Origin header, "" if
// absent) passes p; requestHost is the request's Host header and is only
// consulted when p.SameHost is set.
func OriginAllowed(origin, requestHost string, p OriginPolicy) bool {
	if origin == "" {
		return true
	}
	for _, o := range p.Allowed {
		if o == origin || (p.Wildcard && o == "*") {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if p.SameHost && strings.EqualFold(u.Host, requestHost) {
		return true
	}
	return IsLoopbackHost(u.Hostname())
}

// HostAllowed is the Host half of DNS-rebinding protection, like go-sdk's:
// on a loopback listener the Host header must name a loopback host too. A
// request whose local address is unknown or not loopback passes.
func HostAllowed(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return true
	}
	host, _, err := net.SplitHostPort(la.String())
	if err != nil || !IsLoopbackHost(host) {
		return true
	}
	h := r.Host
	if hh, _, err := net.SplitHostPort(r.Host); err == nil {
		h = hh
	}
	return IsLoopbackHost(h)
}

// IsLoopbackHost reports whether h (a host without port, optionally in
// brackets) is "localhost" or a loopback IP address.
func IsLoopbackHost(h string) bool {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
