package tlsconf

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// DefaultHandshakeLogEvery is how often failed listener handshakes are
// summed up in the log at most.
const DefaultHandshakeLogEvery = time.Minute

// HandshakeLog is the http.Server.ErrorLog of a TLS listener. net/http
// writes one line per failed handshake ("http: TLS handshake error from
// ADDR: ERR"): a client without a certificate, a TLS 1.1 client, plain
// http. Those become one WARN at most every Every (with how many there
// were and the last peer and cause), never a line per connection; a peer
// that left before saying anything (EOF: a TCP health check) is DEBUG;
// other lines of net/http are logged at WARN as they come.
type HandshakeLog struct {
	Log   *slog.Logger
	Every time.Duration    // default DefaultHandshakeLogEvery
	Now   func() time.Time // default time.Now

	mu     sync.Mutex
	last   time.Time // when the last summary was logged
	held   int       // failures since then, not logged
	logged bool
}

// Logger is the *log.Logger to set as http.Server.ErrorLog.
func (h *HandshakeLog) Logger() *log.Logger { return log.New(h, "", 0) }

const handshakePrefix = "http: TLS handshake error from "

// Write implements io.Writer for log.Logger (one call per line).
func (h *HandshakeLog) Write(p []byte) (int, error) {
	line := string(bytes.TrimRight(p, "\n"))
	rest, ok := strings.CutPrefix(line, handshakePrefix)
	if !ok {
		h.Log.Warn("http server: " + strings.TrimPrefix(line, "http: "))
		return len(p), nil
	}
	peer, cause, _ := strings.Cut(rest, ": ")
	if cause == "EOF" || strings.HasSuffix(cause, "connection reset by peer") {
		// A peer that connected and left without a word: a load
		// balancer's TCP check, a port scan. Nothing to act on.
		h.Log.Debug("TLS: a client connected to the listener and left before its handshake", "peer", peer)
		return len(p), nil
	}
	h.failed(peer, cause)
	return len(p), nil
}

func (h *HandshakeLog) failed(peer, cause string) {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	every := h.Every
	if every <= 0 {
		every = DefaultHandshakeLogEvery
	}
	h.mu.Lock()
	t := now()
	if h.logged && t.Sub(h.last) < every {
		h.held++
		h.mu.Unlock()
		return
	}
	n := h.held + 1
	h.held, h.last, h.logged = 0, t, true
	h.mu.Unlock()
	h.Log.LogAttrs(context.Background(), slog.LevelWarn,
		"TLS: a client's handshake with the listener failed (a client without a valid certificate, an old TLS version, or not TLS at all); such failures are logged at most once per "+every.String(),
		slog.Int("failures", n), slog.String("last_peer", peer), slog.String("last_cause", plainHandshakeCause(cause)))
}

// plainHandshakeCause words the server side's handshake errors.
func plainHandshakeCause(cause string) string {
	switch {
	case strings.Contains(cause, "client didn't provide a certificate"):
		return "the client sent no certificate, and --tls-client-auth require wants one"
	case strings.Contains(cause, "failed to verify certificate"):
		return "the client's certificate is not signed by --tls-client-ca (" + cause + ")"
	case strings.Contains(cause, "client offered only unsupported versions"), strings.Contains(cause, "unsupported versions"):
		return "the client offered only TLS versions older than 1.2 (" + cause + ")"
	case strings.Contains(cause, "first record does not look like a TLS handshake"):
		return "the client did not speak TLS (plain http to an https listener?)"
	}
	return cause
}
