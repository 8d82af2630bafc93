package legacyface

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
	"unique"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Shares of the session pool. One bound for the whole table
// (Config.MaxSessions) lets a single client that opens sessions in a loop
// lock every other client out until its sessions idle out (24 h by
// default). So besides the bound:
//
//   - each source — a principal, or, for a client without credentials, its
//     address (the address a --trusted-proxy forwarded; an IPv6 client by
//     its /64, which one host usually holds whole) — may hold at most
//     Config.MaxSessionsPerPrincipal sessions; a new one beyond that gets
//     CodeLimitReached with HTTP 429 (its own limit, not the process's);
//   - when the table is full, a new session takes the place of the least
//     recently used idle session without credentials (whole or dormant),
//     so an authenticated client still gets a session however many
//     anonymous ones are open. The evicted session is released like an
//     expired one: its record is deleted and its next request answers 404,
//     after which its client initializes again (L-05, session expiry).
//     Sessions with credentials are never evicted: their owner can be told
//     apart and is bounded by its share.
//
// Refusals and evictions are logged in plain words, at most once per
// poolLogEvery each, with the count of those not logged since.

// DefaultSessionShareDivisor and DefaultSessionShareFloor size the default
// per-source share: a tenth of the pool (ten sources at least are needed to
// fill it), but never less than DefaultSessionShareFloor sessions (or the
// whole pool when that is smaller), so a small pool still serves one busy
// client.
const (
	DefaultSessionShareDivisor = 10
	DefaultSessionShareFloor   = 64
)

// Limit names in the data of a CodeLimitReached error: the flag to raise.
const (
	limitNameSessions     = "max-sessions"
	limitNameSessionShare = "max-sessions-per-principal"
	limitNameTasks        = "max-tasks-per-principal"
	limitNameWaiters      = "max-waiters-per-principal"
)

// Retry-After of the limit refusals, in seconds: a session place frees when
// a client closes or idles out (or, full of anonymous sessions, at once);
// a call or wait place when a request ends.
const (
	sessionsRetryAfter = 5
	requestsRetryAfter = 1
)

// poolLogEvery bounds how often a refusal or an eviction is logged: a flood
// must not become a flood of log lines.
const poolLogEvery = 10 * time.Second

// source is what a session's share is counted by: "p:" and the principal,
// or "a:" and the client's address.
type source = unique.Handle[string]

// sessionPool is the per-source bookkeeping of the session table, under
// Bridge.mu.
type sessionPool struct {
	held map[source]int // sessions (whole and dormant) per source
	// anon is the eviction queue of sessions without credentials, least
	// recently used first as far as it knows: a session used since it was
	// queued goes to the back when it reaches the front; entries of
	// sessions that ended are dropped there (or when the queue is compacted).
	anon     []anonEntry
	anonHead int
	anonLive int // anonymous sessions in the table (bounds the queue's garbage)

	lastFullSweep time.Time // the last sweep of a full table on admission

	refusedLog, evictedLog rateLog
}

type anonEntry struct {
	k    sessionKey
	seen int64 // the session's lastSeen (Unix nanoseconds) when queued
}

// rateLog logs at most once per poolLogEvery and counts what it skipped.
type rateLog struct {
	mu      sync.Mutex
	last    time.Time
	skipped int
}

// allow reports whether to log now, and how many were skipped before.
func (l *rateLog) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < poolLogEvery {
		l.skipped++
		return false, 0
	}
	n := l.skipped
	l.last, l.skipped = now, 0
	return true, n
}

// sourceOf is the share r's new session counts against.
func sourceOf(r *http.Request, principal string) source {
	if principal != "" {
		return unique.Make("p:" + principal)
	}
	return unique.Make("a:" + clientAddr(r))
}

// anonymous reports whether src is a client without credentials.
func anonymous(src source) bool { return strings.HasPrefix(src.Value(), "a:") }

// clientAddr names the client of r for its share: the address a trusted
// proxy forwarded (the last X-Forwarded-For or Forwarded for= element,
// the one the proxy itself added), else the peer's. An IPv6 address counts
// by its /64.
func clientAddr(r *http.Request) string {
	var a netip.Addr
	if er, ok := edge.FromContext(r.Context()); ok {
		if er.Trusted {
			a = forwardedFor(r.Header)
		}
		if !a.IsValid() && er.Peer.IsValid() {
			a = er.Peer.Addr()
		}
	}
	if !a.IsValid() {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		a, _ = netip.ParseAddr(host)
	}
	if !a.IsValid() {
		return "unknown"
	}
	a = a.Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.String()
		}
	}
	return a.String()
}

// forwardedFor is the client address a trusted proxy put last in
// X-Forwarded-For, else in Forwarded's for= (zero when neither parses).
func forwardedFor(h http.Header) netip.Addr {
	if v := h.Values("X-Forwarded-For"); len(v) > 0 {
		parts := strings.Split(v[len(v)-1], ",")
		if a, err := netip.ParseAddr(strings.TrimSpace(parts[len(parts)-1])); err == nil {
			return a
		}
	}
	if v := h.Values("Forwarded"); len(v) > 0 {
		elems := strings.Split(v[len(v)-1], ",")
		for _, pair := range strings.Split(elems[len(elems)-1], ";") {
			k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || !strings.EqualFold(k, "for") {
				continue
			}
			val = strings.Trim(val, `"`)
			if ap, err := netip.ParseAddrPort(val); err == nil {
				return ap.Addr()
			}
			if a, err := netip.ParseAddr(strings.Trim(val, "[]")); err == nil {
				return a
			}
		}
	}
	return netip.Addr{}
}

// heldLocked counts a session of src into the table (b.mu held).
func (b *Bridge) heldLocked(src source, k sessionKey, keyed bool, seen time.Time) {
	if b.pool.held == nil {
		b.pool.held = map[source]int{}
	}
	b.pool.held[src]++
	if anonymous(src) && keyed {
		b.pool.anonLive++
		b.pool.anon = append(b.pool.anon, anonEntry{k: k, seen: seen.UnixNano()})
	}
}

// unheldLocked counts a session of src out of the table (b.mu held).
func (b *Bridge) unheldLocked(src source, keyed bool) {
	if n := b.pool.held[src]; n <= 1 {
		delete(b.pool.held, src)
	} else {
		b.pool.held[src] = n - 1
	}
	if anonymous(src) && keyed {
		b.pool.anonLive--
		b.compactAnonLocked()
	}
}

// compactAnonLocked drops the queue entries of ended sessions once they
// outnumber the live ones, so the queue stays within a small multiple of
// the anonymous sessions the table holds.
func (b *Bridge) compactAnonLocked() {
	p := &b.pool
	if n := len(p.anon) - p.anonHead; n < 1024 || n < 2*p.anonLive+1024 {
		if p.anonHead > 1024 && p.anonHead*2 > len(p.anon) {
			p.anon = append([]anonEntry(nil), p.anon[p.anonHead:]...)
			p.anonHead = 0
		}
		return
	}
	out := make([]anonEntry, 0, p.anonLive+64)
	seen := make(map[sessionKey]bool, p.anonLive)
	for _, e := range p.anon[p.anonHead:] {
		if e.seen < 0 || seen[e.k] || !b.anonHeldLocked(e.k) {
			continue
		}
		seen[e.k] = true
		out = append(out, e)
	}
	p.anon, p.anonHead = out, 0
}

// anonHeldLocked reports whether session k is in the table without
// credentials.
func (b *Bridge) anonHeldLocked(k sessionKey) bool {
	if d, ok := b.dormant[k]; ok {
		return anonymous(d.source)
	}
	s := b.sessions[k.id()]
	return s != nil && anonymous(s.source)
}

// shareFullLocked reports whether src holds its whole share (b.mu held). A
// share as big as the pool is none: the pool's own bound answers then.
func (b *Bridge) shareFullLocked(src source) bool {
	share := b.maxSessionShare()
	return share > 0 && share < b.maxSessions() && b.pool.held[src] >= share
}

// evictScan bounds how many queue entries one eviction looks at past those
// that cannot make room for the newcomer (a flood must not make each of its
// requests walk the whole queue).
const evictScan = 16

// evictLocked takes the least recently used idle session without
// credentials out of the table (b.mu held) for the caller to release, to
// make room for a new session of src; nil when there is none. Only a
// session of a source holding more sessions than src does is taken: a
// newcomer (or an authenticated client) displaces the biggest anonymous
// holders, while a flood from one address cannot displace anyone else's
// sessions, nor its own (it gets 503 once the table is full).
func (b *Bridge) evictLocked(src source) *session {
	p := &b.pool
	mine := b.pool.held[src]
	looked := 0
	for i := p.anonHead; i < len(p.anon) && looked < evictScan; i++ {
		e := p.anon[i]
		if e.seen < 0 {
			continue // taken out before
		}
		drop := func() {
			p.anon[i] = anonEntry{seen: -1}
			if i == p.anonHead {
				p.anonHead++
			}
		}
		if d, ok := b.dormant[e.k]; ok {
			if !anonymous(d.source) {
				drop()
				continue
			}
			if d.lastSeen > e.seen {
				drop()
				p.anon = append(p.anon, anonEntry{k: e.k, seen: d.lastSeen})
				continue
			}
			if b.pool.held[d.source] <= mine {
				looked++
				continue
			}
			drop()
			delete(b.dormant, e.k)
			b.unheldLocked(d.source, true)
			return b.dormantSession(e.k, d)
		}
		s := b.sessions[e.k.id()]
		if s == nil || !anonymous(s.source) {
			drop() // ended
			continue
		}
		if seen := s.lastSeen.UnixNano(); s.busy > 0 || seen > e.seen {
			// In use, or used since it was queued: younger than it looked.
			drop()
			p.anon = append(p.anon, anonEntry{k: e.k, seen: max(seen, b.now().UnixNano())})
			looked++
			continue
		}
		if b.pool.held[s.source] <= mine {
			looked++
			continue
		}
		drop()
		delete(b.sessions, s.id)
		s.inTable = false
		b.idle.remove(s)
		b.unheldLocked(s.source, true)
		return s
	}
	return nil
}

// errSessionShare is the answer to a new session beyond its source's share.
func (b *Bridge) errSessionShare(anon bool) *rpc.Error {
	who := "this client (its credentials)"
	if anon {
		who = "this client address (clients without credentials count by address)"
	}
	return rpc.LimitError(limitNameSessionShare, rpc.LimitScopePrincipal, b.maxSessionShare(), sessionsRetryAfter,
		"%s holds its maximum of %d sessions (--max-sessions-per-principal); close unused sessions (HTTP DELETE) or retry later",
		who, b.maxSessionShare())
}

// logRefused logs a refused session (rate-limited).
func (b *Bridge) logRefused(share bool, src source) {
	ok, skipped := b.pool.refusedLog.allow(b.now())
	if !ok {
		return
	}
	if share {
		who := "a client with credentials"
		if anonymous(src) {
			who = "client address " + strings.TrimPrefix(src.Value(), "a:")
		}
		b.log.Warn("face: refused a new legacy session: "+who+" holds its whole share of the session pool",
			"max_sessions_per_principal", b.maxSessionShare(), "refusals_not_logged", skipped)
		return
	}
	b.log.Warn("face: refused a new legacy session: the session limit is reached and no idle session without credentials can make room",
		"max_sessions", b.maxSessions(), "refusals_not_logged", skipped)
}

// logEvicted logs an eviction (rate-limited).
func (b *Bridge) logEvicted() {
	ok, skipped := b.pool.evictedLog.allow(b.now())
	if !ok {
		return
	}
	b.log.Warn("face: the session limit is reached: ended the least recently used idle session without credentials to make room for a new one (it answers 404 and its client initializes again)",
		"max_sessions", b.maxSessions(), "evictions_not_logged", skipped)
}
