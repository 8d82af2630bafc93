package legacyface

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/edge"
)

// A client without credentials counts by the address a trusted proxy
// forwarded (the element it added last), never by one an untrusted peer
// claims; IPv6 by its /64.
func TestClientAddrForShares(t *testing.T) {
	for _, tc := range []struct {
		name    string
		peer    string
		trusted bool
		hdr     map[string]string
		want    string
	}{
		{"direct", "192.0.2.1:5", false, nil, "192.0.2.1"},
		{"untrusted peer's header ignored", "192.0.2.1:5", false, map[string]string{"X-Forwarded-For": "203.0.113.9"}, "192.0.2.1"},
		{"trusted proxy: last X-Forwarded-For", "10.0.0.1:5", true, map[string]string{"X-Forwarded-For": "198.51.100.1, 203.0.113.9"}, "203.0.113.9"},
		{"trusted proxy: Forwarded for=", "10.0.0.1:5", true, map[string]string{"Forwarded": `for=192.0.2.60;proto=https, for="[2001:db8:cafe::17]:4711"`}, "2001:db8:cafe::/64"},
		{"trusted proxy without the header", "10.0.0.1:5", true, nil, "10.0.0.1"},
		{"IPv6 peer by /64", "[2001:db8:1:2:3::4]:5", false, nil, "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6", "[::ffff:192.0.2.3]:5", false, nil, "192.0.2.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/mcp", nil)
			for k, v := range tc.hdr {
				r.Header.Set(k, v)
			}
			ap := netip.MustParseAddrPort(tc.peer)
			r = r.WithContext(edge.NewContext(r.Context(), &edge.Request{Peer: netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), Trusted: tc.trusted}))
			if got := clientAddr(r); got != tc.want {
				t.Errorf("clientAddr = %q, want %q", got, tc.want)
			}
		})
	}
}
