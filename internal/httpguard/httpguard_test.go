package httpguard

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestOriginAllowed covers M-43: which Origin values each policy accepts.
func TestOriginAllowed(t *testing.T) {
	strict := OriginPolicy{Allowed: []string{"https://app.example"}}
	wild := OriginPolicy{Allowed: []string{"*"}}
	wildOn := OriginPolicy{Allowed: []string{"*"}, Wildcard: true}
	same := OriginPolicy{SameHost: true}
	for _, tc := range []struct {
		name, origin, host string
		p                  OriginPolicy
		want               bool
	}{
		{"no origin", "", "evil.example", OriginPolicy{}, true},
		{"no origin same-host policy", "", "evil.example", same, true},
		{"allowed list exact", "https://app.example", "bridge.example", strict, true},
		{"allowed list other", "https://other.example", "bridge.example", strict, false},
		{"allowed list needs exact match", "https://app.example:443", "bridge.example", strict, false},
		{"star without wildcard is literal", "https://evil.example", "bridge.example", wild, false},
		{"star literal matches itself", "*", "bridge.example", wild, true},
		{"star with wildcard", "https://evil.example", "bridge.example", wildOn, true},
		{"star with wildcard bad scheme", "file://x", "bridge.example", wildOn, true},
		{"same host", "http://bridge.example:8080", "bridge.example:8080", same, true},
		{"same host case-insensitive", "https://Bridge.Example", "bridge.example", same, true},
		{"same host other port", "http://bridge.example:9090", "bridge.example:8080", same, false},
		{"same host off", "http://bridge.example:8080", "bridge.example:8080", OriginPolicy{}, false},
		{"same host bad scheme", "ftp://bridge.example", "bridge.example", same, false},
		{"loopback ipv4", "http://127.0.0.1:3000", "x", OriginPolicy{}, true},
		{"loopback ipv4 other", "http://127.8.9.10", "x", OriginPolicy{}, true},
		{"loopback ipv6", "http://[::1]:3000", "x", OriginPolicy{}, true},
		{"localhost", "https://localhost", "x", OriginPolicy{}, true},
		{"localhost upper", "http://LOCALHOST:1", "x", OriginPolicy{}, true},
		{"foreign", "https://evil.example", "x", OriginPolicy{}, false},
		{"foreign ip", "http://10.0.0.1", "x", OriginPolicy{}, false},
		{"null origin", "null", "x", OriginPolicy{}, false},
		{"file scheme loopback", "file://localhost", "x", OriginPolicy{}, false},
		{"ws scheme loopback", "ws://127.0.0.1", "x", OriginPolicy{}, false},
		{"unparsable", "http://[::1", "x", OriginPolicy{}, false},
		{"localhost suffix trick", "http://localhost.evil.example", "x", OriginPolicy{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OriginAllowed(tc.origin, tc.host, tc.p); got != tc.want {
				t.Errorf("OriginAllowed(%q, %q, %+v) = %v, want %v", tc.origin, tc.host, tc.p, got, tc.want)
			}
		})
	}
}

// TestHostAllowed covers DNS-rebinding protection: a loopback listener only
// serves loopback Host names; other listeners serve any Host.
func TestHostAllowed(t *testing.T) {
	tcp := func(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	for _, tc := range []struct {
		name  string
		local net.Addr // nil: no local address in the context
		host  string
		want  bool
	}{
		{"no local addr", nil, "evil.example", true},
		{"loopback listener loopback host", tcp("127.0.0.1:8080"), "127.0.0.1:8080", true},
		{"loopback listener localhost", tcp("127.0.0.1:8080"), "localhost:8080", true},
		{"loopback listener localhost no port", tcp("127.0.0.1:8080"), "localhost", true},
		{"loopback listener ipv6 host", tcp("127.0.0.1:8080"), "[::1]:8080", true},
		{"ipv6 loopback listener", tcp("[::1]:8080"), "localhost:8080", true},
		{"loopback listener foreign host", tcp("127.0.0.1:8080"), "evil.example:8080", false},
		{"loopback listener foreign host no port", tcp("127.0.0.1:8080"), "evil.example", false},
		{"ipv6 loopback listener foreign host", tcp("[::1]:8080"), "10.0.0.1", false},
		{"non-loopback listener foreign host", tcp("192.0.2.1:8080"), "evil.example", true},
		{"wildcard listener foreign host", tcp("0.0.0.0:8080"), "evil.example", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Host = tc.host
			if tc.local != nil {
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.local))
			}
			if got := HostAllowed(r); got != tc.want {
				t.Errorf("HostAllowed(local %v, Host %q) = %v, want %v", tc.local, tc.host, got, tc.want)
			}
		})
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.1.2.3": true,
		"::1": true, "[::1]": true, "0.0.0.0": false, "::": false, "example.com": false,
		"10.0.0.1": false, "": false, "localhost.": false,
	} {
		if got := IsLoopbackHost(h); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", h, got, want)
		}
	}
}
