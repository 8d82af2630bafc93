package legacyup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// A legacy server binds tasks to the session that created them (L-68: a task
// is found only through its own session, or principal). Several bridge
// processes serving modern clients in front of one legacy server therefore
// have to use the same upstream session per principal, or a task created
// through one process could not be read, answered or cancelled through
// another. The pool records each key's session in the shared store — a
// session record owned by sessionmap.BridgePrincipal, which no client can
// read — and every process sharing the store reuses it by its Mcp-Session-Id,
// without initializing again (the record keeps the InitializeResult the
// faces need: server/discover, the tasks capability).
//
// The record is created with CreateSession, which fails for an id that is
// taken: when two processes open a session for the same key at once, the
// first record wins, the loser ends its own session upstream and uses the
// winner's. A recorded session the upstream no longer knows (HTTP 404, L-68:
// the server restarted or expired it) is replaced; a task remembers the
// session it was created on in its own record, so it is found (or reported
// lost, clearly) whichever session the principal uses now.

// sharedIdle is how long a shared record lives without use: a principal that
// comes back later simply gets a new upstream session.
const sharedIdle = 24 * time.Hour

// sharedTouchEvery bounds how often a process slides a record's expiry.
const sharedTouchEvery = time.Hour

// sharedRecord is what the store keeps of one shared upstream session.
type sharedRecord struct {
	Upstream         string          `json:"upstream"`
	SessionID        string          `json:"sessionId"`
	InitializeResult json.RawMessage `json:"initializeResult,omitempty"`
}

// sharing reports whether the pool records its sessions in a store.
func (p *Pool) sharing() bool { return p.cfg.Store != nil && p.cfg.Endpoint != "" }

// sharedScope names key's record: a hash, so neither the principal nor the
// upstream URL has to fit an id's length, and equal for every process with
// the same upstream.
func (p *Pool) sharedScope(key string) sessionmap.Scope {
	sum := sha256.Sum256([]byte(p.cfg.Target + "\x00" + key))
	return sessionmap.Scope{Principal: sessionmap.BridgePrincipal, Session: "upstream-session-" + hex.EncodeToString(sum[:16])}
}

// loadShared reads key's record; ok is false when there is none.
func (p *Pool) loadShared(ctx context.Context, sc sessionmap.Scope) (rec sharedRecord, ok bool, err error) {
	s, err := p.cfg.Store.GetSession(ctx, sc)
	if errors.Is(err, sessionmap.ErrNotFound) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	if err := json.Unmarshal(s.InitializeParams, &rec); err != nil || rec.SessionID == "" {
		return rec, false, nil // unreadable: replaced like a dead one
	}
	return rec, true, nil
}

// sharedSession returns the session recorded for key (checked alive), or
// opens one and records it.
func (p *Pool) sharedSession(ctx context.Context, key, authorization string) (*Session, error) {
	sc := p.sharedScope(key)
	rec, found, err := p.loadShared(ctx, sc)
	if err != nil {
		p.logger().Warn("legacy upstream: cannot read the shared upstream session from the store; opening one for this process only",
			"upstream", p.cfg.Target, "err", err)
		return p.open(ctx, key, authorization)
	}
	if found {
		s, err := p.adopt(ctx, key, rec, authorization)
		if err != nil || s != nil {
			return s, err
		}
	}
	s, err := p.open(ctx, key, authorization)
	if err != nil {
		return nil, err
	}
	return p.publish(ctx, sc, key, s, rec, found, authorization), nil
}

// adopt returns a handle on the recorded session, or nil when it is dead
// (this process saw it end, or the upstream answers 404 for it).
func (p *Pool) adopt(ctx context.Context, key string, rec sharedRecord, authorization string) (*Session, error) {
	p.mu.Lock()
	s := p.byID[rec.SessionID]
	fresh := s == nil
	if fresh {
		s = newSession(p, p.keyOf(key))
		s.id = rec.SessionID
		s.wire = &httpWire{endpoint: p.cfg.Endpoint, hc: p.clientFor(p.keyOf(key), authorization)}
		p.byID[rec.SessionID] = s
	}
	p.mu.Unlock()
	if !s.Alive() {
		return nil, nil
	}
	s.shared.Store(true)
	s.setInitializeResult(rec.InitializeResult)
	if fresh {
		// Never used by this process: make sure the upstream still knows it
		// before a client's request depends on it.
		pctx, cancel := context.WithTimeout(ctx, p.cfg.InitTimeout)
		_, err := s.Call(pctx, "ping", json.RawMessage("{}"), CallOptions{})
		cancel()
		switch {
		case errors.Is(err, ErrSessionGone):
			return nil, nil
		case err != nil && (Retryable(err) || Unauthorized(err)):
			return nil, err
		}
		// Any other answer (even a JSON-RPC error) comes from a server that
		// still has the session.
	}
	p.logger().Debug("legacy upstream: using the shared session", "upstream", p.cfg.Target)
	return s, nil
}

// publish records s as key's session, replacing the dead one the store named
// (stale), and returns the session the key uses: s, or the one another
// process recorded first (s is then ended upstream).
func (p *Pool) publish(ctx context.Context, sc sessionmap.Scope, key string, s *Session, stale sharedRecord, found bool, authorization string) *Session {
	ctx = context.WithoutCancel(ctx)
	winner := func() *Session {
		cur, ok, err := p.loadShared(ctx, sc)
		if err != nil || !ok || cur.SessionID == s.id || (found && cur.SessionID == stale.SessionID) {
			return nil
		}
		w, err := p.adopt(ctx, key, cur, authorization)
		if err != nil || w == nil {
			return nil
		}
		_ = s.Close() // not shared: ends upstream, nobody else knows it
		return w
	}
	if found {
		// Replace only the record that named the dead session: another
		// process may have replaced it meanwhile.
		if w := winner(); w != nil {
			return w
		}
		if err := p.cfg.Store.DeleteSession(ctx, sc); err != nil && !errors.Is(err, sessionmap.ErrNotFound) {
			p.logger().Warn("legacy upstream: cannot replace the shared upstream session in the store; this process uses its own",
				"upstream", p.cfg.Target, "err", err)
			return s
		}
	}
	body, err := json.Marshal(sharedRecord{Upstream: p.cfg.Target, SessionID: s.id, InitializeResult: s.InitializeResult()})
	if err != nil {
		return s
	}
	err = p.cfg.Store.CreateSession(ctx, sessionmap.Session{
		ID: sc.Session, Principal: sc.Principal, Era: era.Legacy, ProtocolVersion: ProtocolVersion,
		InitializeParams: body, IdleTimeoutMs: sharedIdle.Milliseconds(),
	})
	switch {
	case errors.Is(err, sessionmap.ErrExists):
		if w := winner(); w != nil {
			p.logger().Info("legacy upstream: another bridge process opened the principal's upstream session first; using it",
				"upstream", p.cfg.Target)
			return w
		}
		p.logger().Warn("legacy upstream: the store names another upstream session for this principal that cannot be used; this process uses its own",
			"upstream", p.cfg.Target)
	case err != nil:
		p.logger().Warn("legacy upstream: cannot record the upstream session in the store; other bridge processes will open their own",
			"upstream", p.cfg.Target, "err", err)
	default:
		s.shared.Store(true)
		if found {
			p.logger().Info("legacy upstream: the shared upstream session ended; recorded a new one", "upstream", p.cfg.Target)
		} else {
			p.logger().Info("legacy upstream: recorded the principal's upstream session for every bridge process", "upstream", p.cfg.Target)
		}
	}
	return s
}

// touchShared slides the expiry of key's record.
func (p *Pool) touchShared(ctx context.Context, key string) {
	if _, err := p.cfg.Store.TouchSession(context.WithoutCancel(ctx), p.sharedScope(key), nil); err != nil && !errors.Is(err, sessionmap.ErrNotFound) {
		p.logger().Warn("legacy upstream: cannot refresh the shared upstream session's record", "upstream", p.cfg.Target, "err", err)
	}
}
