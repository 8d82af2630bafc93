package router

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/tlsconf"
)

// An https upstream: Config.UpstreamTLS (--upstream-ca, --upstream-client-cert,
// --upstream-tls-server-name, --upstream-tls-insecure-skip-verify) is the
// tls.Config of the one base transport every HTTP upstream client shares
// (upstreamTransport): both faces, the era probe, the passthrough proxy and
// the OAuth relay's fetches of the upstream's metadata.
//
// A failed handshake or certificate check is a configuration problem, not
// a flaky network: the operator gets a WARN naming the cause in plain words
// and the flag that fixes it (tlsconf.DescribeUpstream), the meter counts it
// with code tls, and the client gets only that the bridge could not reach
// the upstream securely — never the x509 details, which describe the
// operator's PKI, not the client's request.

// upstreamTLSLogEvery is how often a persisting TLS failure is logged again.
const upstreamTLSLogEvery = time.Minute

// UpstreamTLSError is what the upstream clients (and so the clients of the
// bridge) get for a TLS failure towards the upstream. Its text is safe to
// show to a client; the cause is in the log.
type UpstreamTLSError struct {
	// Cause is the operator's wording (tlsconf.DescribeUpstream).
	Cause string
	err   error
}

func (e *UpstreamTLSError) Error() string {
	return "the bridge could not reach the upstream securely (its TLS connection failed; the bridge's log names the cause)"
}

// Unwrap is deliberately absent: callers that print the chain (%v of a
// wrapping error) must not reach the x509 details.

// TLSFailure makes metrics.CodeBucket count it as tls.
func (e *UpstreamTLSError) TLSFailure() bool { return true }

// Temporary: an upstream the bridge could not reach.
func (e *UpstreamTLSError) Temporary() bool { return true }

// tlsGuard is the RoundTripper over the base transport that names and
// hides TLS failures.
type tlsGuard struct {
	next http.RoundTripper
	log  *slog.Logger

	mu     sync.Mutex
	cause  string    // the last cause logged
	logged time.Time // when it was logged
	again  int       // failures with that cause since
}

func (g *tlsGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.next.RoundTrip(req)
	if err == nil {
		return resp, nil
	}
	cause, isTLS := tlsconf.DescribeUpstream(err)
	if !isTLS || req.Context().Err() != nil {
		return resp, err
	}
	g.failed(req, cause)
	return nil, &UpstreamTLSError{Cause: cause, err: err}
}

// failed logs a cause once, then again at most every upstreamTLSLogEvery
// while it persists (with how many requests failed meanwhile). The
// reachability log (oplog.UpstreamHealth) says when requests pass again.
func (g *tlsGuard) failed(req *http.Request, cause string) {
	g.mu.Lock()
	now := time.Now()
	if cause == g.cause && now.Sub(g.logged) < upstreamTLSLogEvery {
		g.again++
		g.mu.Unlock()
		return
	}
	n := g.again
	g.cause, g.logged, g.again = cause, now, 0
	g.mu.Unlock()
	args := []any{"host", req.URL.Host}
	if n > 0 {
		args = append(args, "failed_since_last_logged", n)
	}
	g.log.Warn(cause, args...)
}

// upstreamTLSConfig is the transport's tls.Config: the configured one, or
// Go's defaults with TLS 1.2 at least.
func upstreamTLSConfig(c *tls.Config) *tls.Config {
	if c != nil {
		return c.Clone()
	}
	return &tls.Config{MinVersion: tls.VersionTLS12}
}
