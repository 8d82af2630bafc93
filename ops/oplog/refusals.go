package oplog

import (
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/ops/metrics"
)

// refusalText says, for an operator, what a request outcome means; warn
// marks failures of the bridge or the upstream rather than of the client.
var refusalText = map[string]struct {
	text string
	warn bool
}{
	metrics.OutcomeParseError:          {"the body is not valid JSON-RPC (-32700)", false},
	metrics.OutcomeInvalidRequest:      {"invalid request (-32600)", false},
	metrics.OutcomeMethodNotFound:      {"method not found (-32601)", false},
	metrics.OutcomeInvalidParams:       {"invalid params (-32602)", false},
	metrics.OutcomeResourceNotFound:    {"resource not found (-32002)", false},
	metrics.OutcomeHeaderMismatch:      {"HTTP headers disagree with the body (-32020)", false},
	metrics.OutcomeMissingCapability:   {"a client capability the request needs was not declared (-32021)", false},
	metrics.OutcomeUnsupportedVersion:  {"unsupported protocol version (-32022)", false},
	metrics.OutcomeError:               {"refused with another JSON-RPC error", false},
	metrics.OutcomeInternal:            {"internal error (-32603): the bridge, its task store or the upstream could not complete the request; the error the client got says which", true},
	metrics.OutcomeUpstreamUnavailable: {"the upstream could not be reached", true},
	metrics.OutcomeUnauthorized:        {"the upstream refused the client's credentials (HTTP 401/403, relayed with its challenge): the client must sign in or ask for the scope", false},
}

// Refusals logs client requests the bridge refused (INFO) or failed to
// answer (WARN), in words an operator can act on, without ids or
// credentials. A repeat of the same era, method and outcome within Every
// is counted, not logged; the next line reports how many were suppressed.
type Refusals struct {
	Log *slog.Logger
	// Every is the minimum interval between two lines of one kind (default
	// 10 s).
	Every time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu   sync.Mutex
	last map[string]*refusalSeen
}

type refusalSeen struct {
	at         time.Time
	suppressed int
}

// Observe records the outcome of one client request (a metrics.Outcome*
// value); outcomes that are not refusals or failures are ignored.
func (r *Refusals) Observe(era, method, outcome, client string) {
	r.ObserveReason(era, method, outcome, client, "")
}

// ObserveReason is Observe with the concrete reason the client was given
// (the JSON-RPC error's message; "" when there is none), logged after the
// outcome's words, cut short and with anything shaped like a credential
// (a Bearer token, a long opaque word) replaced.
func (r *Refusals) ObserveReason(era, method, outcome, client, reason string) {
	if r == nil || r.Log == nil {
		return
	}
	t, ok := refusalText[outcome]
	if !ok {
		return
	}
	now, every := time.Now, r.Every
	if r.Now != nil {
		now = r.Now
	}
	if every <= 0 {
		every = 10 * time.Second
	}
	key := era + "\x00" + method + "\x00" + outcome
	r.mu.Lock()
	if r.last == nil {
		r.last = map[string]*refusalSeen{}
	}
	s := r.last[key]
	at := now()
	if s != nil && at.Sub(s.at) < every {
		s.suppressed++
		r.mu.Unlock()
		return
	}
	suppressed := 0
	if s != nil {
		suppressed = s.suppressed
	}
	r.last[key] = &refusalSeen{at: at}
	r.mu.Unlock()
	text := t.text
	if reason = plainReason(reason); reason != "" {
		text += ": " + reason
	}
	args := []any{"era", era, "method", metrics.Method(method), "client", metrics.ClientName(client), "reason", text}
	if suppressed > 0 {
		args = append(args, "similar_since_last", suppressed)
	}
	if t.warn {
		r.Log.Warn("a client request failed", args...)
	} else {
		r.Log.Info("refused a client request", args...)
	}
}

// plainReason is a client's error message fit for the log: one line of at
// most 240 characters, every word of 32 or more token characters (a bearer
// token, a key, an id) and the word after "Bearer" replaced by "[redacted]".
func plainReason(msg string) string {
	words := strings.Fields(msg)
	for i, w := range words {
		if i > 0 && strings.EqualFold(words[i-1], "bearer") || tokenLike(w) {
			words[i] = "[redacted]"
		}
	}
	out := strings.Join(words, " ")
	if r := []rune(out); len(r) > 240 {
		out = string(r[:240]) + "…"
	}
	return out
}

func tokenLike(w string) bool {
	w = strings.Trim(w, `"'(),;:.`)
	if len(w) < 32 {
		return false
	}
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~+/=", c)) {
			return false
		}
	}
	return true
}
