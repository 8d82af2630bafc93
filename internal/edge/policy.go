package edge

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/tasksbridge/tasksbridge/internal/httpguard"
)

// Policy is the bridge's one Host and Origin policy, applied by the edge to
// every request on every path (both faces and the passthrough alike).
//
// Host (DNS-rebinding protection, MCP 2025-11-25 security best practices
// "local MCP server compromise"): a Host naming a loopback address or
// "localhost" is always accepted; so is a Host listed in AllowedHosts
// (--allowed-host). Any other Host is refused with 403 on a loopback
// listener, and on any listener once AllowedHosts is set (then the list is
// what this bridge answers to). A non-loopback listener without
// AllowedHosts accepts every Host, as before: it was reached by its address.
// "*" is not an AllowedHosts entry: it would switch the protection off on
// loopback, and "every Host" is already what a non-loopback listener without
// the list does.
//
// Origin (M-43; MCP Streamable HTTP, 2025-11-25 and 2026-07-28: servers MUST
// validate Origin and answer an invalid one with 403): a request without
// Origin (not a browser) passes; a browser's Origin passes only when it is
// an http(s) origin on a loopback host or equals an AllowedOrigins entry
// (--allowed-origin; scheme and host compared case-insensitively). Neither
// "*" nor "the request's own Host" is accepted: "*" would not validate
// anything, and in a DNS-rebinding attack the attacker's page and the Host
// it makes the browser send are the same name, so a same-host rule would
// admit exactly the attack the check exists for.
type Policy struct {
	// AllowedHosts are host names, optionally with ":port", accepted in the
	// Host header besides loopback ones (lower case; see ParseHosts).
	AllowedHosts []string
	// AllowedOrigins are Origin values accepted besides loopback ones
	// (see ParseOrigins).
	AllowedOrigins []string
}

// Refusal is a request the Host or Origin policy refuses (HTTP 403).
type Refusal struct {
	// Header is "Host" or "Origin".
	Header string
	// Value is the refused header value (neither is a secret).
	Value string
}

func (r *Refusal) Error() string {
	if r.Header == "Host" {
		return fmt.Sprintf("Forbidden: invalid Host header %q (this bridge answers to loopback names and its --allowed-host list)", r.Value)
	}
	return fmt.Sprintf("Forbidden: invalid Origin header %q (browser pages are accepted from loopback origins and the bridge's --allowed-origin list)", r.Value)
}

// Admit applies the policy to a request's Host and Origin header values;
// loopbackListener says the request arrived on a loopback address. It is a
// pure function: nil admits the request.
func (p Policy) Admit(host, origin string, loopbackListener bool) *Refusal {
	if !p.hostAllowed(host, loopbackListener) {
		return &Refusal{Header: "Host", Value: host}
	}
	if !p.originAllowed(origin) {
		return &Refusal{Header: "Origin", Value: origin}
	}
	return nil
}

func (p Policy) hostAllowed(host string, loopbackListener bool) bool {
	name, port := splitHostPort(host)
	if httpguard.IsLoopbackHost(name) {
		return true
	}
	for _, a := range p.AllowedHosts {
		an, ap := splitHostPort(a)
		if strings.EqualFold(an, name) && (ap == "" || ap == port) {
			return true
		}
	}
	return len(p.AllowedHosts) == 0 && !loopbackListener
}

func (p Policy) originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	for _, o := range p.AllowedOrigins {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	// scheme://host[:port] and nothing else (RFC 6454 §6.1), read without
	// url.Parse's allocation.
	scheme, hostport, ok := strings.Cut(origin, "://")
	if !ok || !(strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) || hostport == "" || strings.ContainsAny(hostport, "/?#@ ") {
		return false
	}
	name, _ := splitHostPort(hostport)
	return httpguard.IsLoopbackHost(name)
}

// splitHostPort splits "name[:port]" (IPv6 in brackets) without failing
// and without allocating (net.SplitHostPort allocates its error for a Host
// without port).
func splitHostPort(h string) (name, port string) {
	if strings.HasPrefix(h, "[") {
		i := strings.IndexByte(h, ']')
		if i < 0 {
			return h[1:], ""
		}
		if rest := h[i+1:]; strings.HasPrefix(rest, ":") {
			port = rest[1:]
		}
		return h[1:i], port
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.IndexByte(h, ':') == i {
		return h[:i], h[i+1:]
	}
	return h, "" // a name, or an IPv6 address without brackets
}

// splitList splits repeated flag values that may each be comma lists.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// ParseHosts validates --allowed-host values (each may be a comma list):
// host names or IP addresses, optionally with ":port", no scheme, no path,
// no "*".
func ParseHosts(vs []string) ([]string, error) {
	var out []string
	for _, h := range splitList(vs) {
		if h == "*" || strings.Contains(h, "*") {
			return nil, errors.New("--allowed-host does not take \"*\": list the host names clients use; " +
				"to accept every Host, listen on a non-loopback address without --allowed-host")
		}
		if strings.Contains(h, "/") {
			return nil, fmt.Errorf("--allowed-host %q: give a host name with an optional :port, without scheme or path", h)
		}
		name, port := splitHostPort(h)
		if name == "" || strings.ContainsAny(name, " @?#") {
			return nil, fmt.Errorf("--allowed-host %q is not a host name", h)
		}
		if port != "" {
			if _, err := netip.ParseAddrPort("127.0.0.1:" + port); err != nil {
				return nil, fmt.Errorf("--allowed-host %q: %q is not a port", h, port)
			}
		}
		out = append(out, strings.ToLower(h))
	}
	return out, nil
}

// ParseOrigins validates --allowed-origin values (each may be a comma
// list): scheme://host[:port] with scheme http or https, nothing after it,
// no "*" (see Policy).
func ParseOrigins(vs []string) ([]string, error) {
	var out []string
	for _, o := range splitList(vs) {
		if strings.Contains(o, "*") {
			return nil, errors.New("--allowed-origin does not take \"*\": MCP servers must validate Origin (M-43); " +
				"list each origin that serves a browser client, e.g. https://app.example.com")
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("--allowed-origin %q: give an origin as a browser sends it, scheme://host[:port] (http or https, no path)", o)
		}
		out = append(out, strings.TrimSuffix(o, "/"))
	}
	return out, nil
}

// ParseTrustedProxies reads --trusted-proxy values (each may be a comma
// list): CIDR prefixes or single IP addresses.
func ParseTrustedProxies(vs []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range splitList(vs) {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxy %q is neither a CIDR prefix (10.0.0.0/8) nor an IP address", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
