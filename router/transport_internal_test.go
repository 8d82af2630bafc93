package router

import (
	"crypto/tls"
	"net/http"
	"testing"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The upstream clients share a transport whose pool keeps idle connections
// for concurrent calls (Go's default of 2 per host made every burst dial),
// and closes them after a while; a configured Transport is used as given.
func TestUpstreamTransportPool(t *testing.T) {
	s, err := New(Config{Upstream: "http://127.0.0.1:9/mcp", Store: sessionmap.NewMemory(), UpstreamEra: "legacy"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mt, ok := s.proxy.Transport.(*meterTransport)
	if !ok {
		t.Fatalf("proxy transport is %T, want the upstream meter", s.proxy.Transport)
	}
	g, ok := mt.next.(*tlsGuard)
	if !ok {
		t.Fatalf("upstream base transport is %T, want the TLS guard", mt.next)
	}
	tr, ok := g.next.(*http.Transport)
	if !ok {
		t.Fatalf("upstream base transport is %T, want *http.Transport", g.next)
	}
	if tr.TLSClientConfig == nil || tr.TLSClientConfig.MinVersion != tls.VersionTLS12 {
		t.Errorf("upstream TLS config %+v, want TLS 1.2 at least", tr.TLSClientConfig)
	}
	if tr == http.DefaultTransport {
		t.Fatal("the upstream transport is http.DefaultTransport itself, not a private clone")
	}
	if tr.MaxIdleConnsPerHost != upstreamMaxIdleConns || tr.MaxIdleConns != upstreamMaxIdleConns || tr.IdleConnTimeout != upstreamIdleConnTimeout {
		t.Fatalf("pool: %d idle per host, %d idle in all, idle timeout %v; want %d, %d, %v",
			tr.MaxIdleConnsPerHost, tr.MaxIdleConns, tr.IdleConnTimeout, upstreamMaxIdleConns, upstreamMaxIdleConns, upstreamIdleConnTimeout)
	}
	if upstreamMaxIdleConns < 64 {
		t.Fatalf("upstreamMaxIdleConns %d is too small for concurrent upstream calls", upstreamMaxIdleConns)
	}
	if tr.Proxy == nil || tr.DialContext == nil {
		t.Error("the clone lost http.DefaultTransport's proxy or dialer settings")
	}

	own := &http.Transport{}
	s2, err := New(Config{Upstream: "http://127.0.0.1:9/mcp", Store: sessionmap.NewMemory(), UpstreamEra: "legacy", Transport: own})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := s2.proxy.Transport.(*meterTransport).next.(*tlsGuard).next; got != own {
		t.Fatalf("configured transport replaced by %T", got)
	}
}
