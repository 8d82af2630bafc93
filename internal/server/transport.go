package server

import (
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
// http.DefaultTransport with the pool sized as above.
func upstreamTransport(configured http.RoundTripper) http.RoundTripper {
	if configured != nil {
		return configured
	}
	dt, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t := dt.Clone()
	t.MaxIdleConns = upstreamMaxIdleConns
	t.MaxIdleConnsPerHost = upstreamMaxIdleConns
	t.IdleConnTimeout = upstreamIdleConnTimeout
	return t
}
