package edge

import "net/netip"

// Live is the part of an Edge's Config that may change while it serves
// (bridge serve re-reads its config file on SIGHUP): the Host and Origin
// policy (M-43), the trusted proxies and the body bound. A Live value is
// never modified once handed to Reconfigure, so every request sees one
// whole policy, old or new, never half of each.
type Live struct {
	Policy         Policy
	TrustedProxies []netip.Prefix
	// MaxBodyBytes bounds a POST body (0 or less: DefaultMaxBodyBytes).
	MaxBodyBytes int64
}

// Reconfigure replaces the edge's live policy; requests that already passed
// the edge keep what they were admitted under. The slices are copied, so
// the caller may reuse its own.
func (e *Edge) Reconfigure(l Live) {
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	l.Policy.AllowedHosts = append([]string(nil), l.Policy.AllowedHosts...)
	l.Policy.AllowedOrigins = append([]string(nil), l.Policy.AllowedOrigins...)
	l.TrustedProxies = append([]netip.Prefix(nil), l.TrustedProxies...)
	e.live.Store(&l)
}

// Current returns the live policy in force.
func (e *Edge) Current() Live { return *e.live.Load() }
