// Package oplog is the bridge's operator logging: the slog handler of
// `bridge serve` (text or JSON, with third-party library records kept out
// unless asked for) and the upstream reachability log (one line per change).
package oplog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/ops/metrics"
)

// Formats of NewHandler.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// library is a package whose log records are internals: below min they
// are dropped unless libraries are asked for.
type library struct {
	prefix, name string
	min          slog.Level
}

// libraries are the MCP Go SDK and the Badger store. Badger's logger adapter
// (in sessionmap) turns the engine's warnings into WARN records in plain
// words naming the data directory: a damaged or full disk is something the
// operator must see, so they pass by default, while the adapter's DEBUG
// records (Badger's info and debug chatter) do not. go-sdk's warnings are
// advice to the SDK's user, which the bridge has already taken.
var libraries = []library{
	{"github.com/modelcontextprotocol/go-sdk/", "go-sdk", slog.LevelError},
	{"github.com/dgraph-io/badger", "badger", slog.LevelError},
	{"github.com/tasksbridge/tasksbridge/sessionmap.badgerLogger", "badger", slog.LevelWarn},
}

// libraryOf returns the library a record was logged from, or nil.
func libraryOf(pc uintptr) *library {
	if pc == 0 {
		return nil
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	for i, l := range libraries {
		if strings.HasPrefix(f.Function, l.prefix) {
			return &libraries[i]
		}
	}
	return nil
}

// NewHandler returns the handler of the bridge's logs on w: format is text
// or json (slog's handlers), level the minimum level: a *slog.LevelVar
// lets the level change while the process runs (bridge serve's SIGHUP
// re-reads --log-level), a slog.Level fixes it. Records logged by a
// library (go-sdk, Badger) are internals an operator cannot act on (such as
// go-sdk's advice to "set StreamableHTTPOptions.Stateless"): they are
// dropped below Error (below Warn for the store engine's warnings) unless
// withLibraries, and always carry library=<name>.
func NewHandler(w io.Writer, format string, level slog.Leveler, withLibraries bool) (slog.Handler, error) {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch format {
	case "", FormatText:
		h = slog.NewTextHandler(w, opts)
	case FormatJSON:
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("log format %q: want text or json", format)
	}
	return &libraryFilter{next: h, with: withLibraries}, nil
}

type libraryFilter struct {
	next slog.Handler
	with bool
}

func (f *libraryFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return f.next.Enabled(ctx, l)
}

func (f *libraryFilter) Handle(ctx context.Context, r slog.Record) error {
	if lib := libraryOf(r.PC); lib != nil {
		if !f.with && r.Level < lib.min {
			return nil
		}
		r = r.Clone()
		r.AddAttrs(slog.String("library", lib.name))
	}
	return f.next.Handle(ctx, r)
}

func (f *libraryFilter) WithAttrs(as []slog.Attr) slog.Handler {
	return &libraryFilter{next: f.next.WithAttrs(as), with: f.with}
}

func (f *libraryFilter) WithGroup(name string) slog.Handler {
	return &libraryFilter{next: f.next.WithGroup(name), with: f.with}
}

// UpstreamHealth logs an upstream's reachability as operators need it: a
// WARN when it stops answering, an INFO when it answers again (with how long
// it was down and how many requests failed meanwhile), and an INFO for the
// first answer; nothing while the state holds.
type UpstreamHealth struct {
	Log    *slog.Logger
	Target string
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu        sync.Mutex
	state     int // 0 unknown, 1 reachable, 2 unreachable
	downSince time.Time
	failed    int
	refusing  string // the code bucket of the last credential refusal logged ("" while requests pass)
}

// Observe records the outcome of one request to the upstream: nil or a
// JSON-RPC answer means it is reachable; a transport failure or timeout
// means it is not; a request the caller cancelled says nothing.
func (h *UpstreamHealth) Observe(method string, err error) {
	if h == nil || h.Log == nil {
		return
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	var down bool
	code := metrics.CodeBucket(err)
	switch code {
	case metrics.CodeCancelled:
		return
	case metrics.CodeTransport, metrics.CodeTimeout, metrics.CodeTLS:
		down = true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.observeRefusal(code, method)
	switch {
	case down && h.state != 2 && code == metrics.CodeTLS:
		h.state, h.downSince, h.failed = 2, now(), 1
		h.Log.Warn("upstream unreachable: the TLS handshake with it failed (check its certificate, its host name and the bridge's trusted CAs); requests that need it fail until it succeeds",
			"upstream", h.Target, "method", method, "err", err.Error())
	case down && h.state != 2:
		h.state, h.downSince, h.failed = 2, now(), 1
		h.Log.Warn("upstream unreachable: requests and task polls that need it fail or wait until it answers again",
			"upstream", h.Target, "method", method, "err", err.Error())
	case down:
		h.failed++
	case !down && h.state == 2:
		h.state = 1
		h.Log.Info("upstream reachable again", "upstream", h.Target,
			"down_for", now().Sub(h.downSince).Round(time.Millisecond).String(), "failed_requests", h.failed)
	case !down && h.state == 0:
		h.state = 1
		h.Log.Info("upstream reachable", "upstream", h.Target)
	}
}

// observeRefusal logs, once per change, that the upstream refuses requests
// for their credentials (HTTP 401 or 403): it is reachable, the clients get
// its challenge and must authorize; nothing is wrong with the bridge. A
// request that passes again ends the refusal state. Called with h.mu held.
func (h *UpstreamHealth) observeRefusal(code, method string) {
	switch code {
	case metrics.CodeUnauthorized, metrics.CodeForbidden:
		if h.refusing == code {
			return
		}
		h.refusing = code
		if code == metrics.CodeUnauthorized {
			h.Log.Info("upstream requires authorization: it answered HTTP 401 Unauthorized; clients without valid credentials get its challenge and must sign in",
				"upstream", h.Target, "method", method)
		} else {
			h.Log.Warn("upstream refused a request's authorization: it answered HTTP 403 Forbidden (insufficient scope or a denied principal); the client gets its challenge",
				"upstream", h.Target, "method", method)
		}
	case metrics.CodeOK:
		h.refusing = ""
	}
}
