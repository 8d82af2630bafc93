package router

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"time"
)

// The upstream connection pool. Every HTTP upstream client the server builds
// (the legacy upstream pool of the modern face, the modern upstream client of
// the legacy face, the era probe, the passthrough proxy) shares one
// *http.Transport, towards one host. Each concurrent upstream request holds
// its own HTTP/1.1 connection: client calls, watcher polls, blocking
// tasks/result streams. Go's default keeps only 2 idle connections per host,
// so under a few concurrent calls most connections are closed when they
// return and dialled again for the next request (a CPU profile of 8
// concurrent calls spent about 5% of the bridge in dialling). The pool is
// therefore sized for the concurrency the bridge serves, not for a single
// browser-like client; idle connections above what a burst needed are closed
// after upstreamIdleConnTimeout, so the larger pool costs nothing at rest.
const (
	// upstreamMaxIdleConns bounds the idle connections kept to the upstream
	// (per host and in all: there is one upstream host).
	upstreamMaxIdleConns = 256
	// upstreamIdleConnTimeout closes a connection idle this long.
	upstreamIdleConnTimeout = 90 * time.Second
)

// upstreamTransport returns the base RoundTripper of every HTTP upstream
// client: configured (tests, embedding: used as given) or a clone of
// http.DefaultTransport with the pool sized as above and tlsConf (nil: Go's
// defaults, TLS 1.2 at least) for an https upstream (upstreamtls.go). Either
// way TLS failures are named in the log and hidden from clients (tlsGuard).
func upstreamTransport(configured http.RoundTripper, tlsConf *tls.Config, log *slog.Logger) http.RoundTripper {
	g := &tlsGuard{next: configured, log: log}
	if configured != nil {
		return g
	}
	dt, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		g.next = http.DefaultTransport
		return g
	}
	t := dt.Clone()
	t.MaxIdleConns = upstreamMaxIdleConns
	t.MaxIdleConnsPerHost = upstreamMaxIdleConns
	t.IdleConnTimeout = upstreamIdleConnTimeout
	t.TLSClientConfig = upstreamTLSConfig(tlsConf)
	g.next = t
	return g
}
