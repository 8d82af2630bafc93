package legacyface

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Sessions are records, not servers. An HTTP session is its store record
// plus a small entry in the session table (a *session with no maps, no
// goroutine and no go-sdk server until a request needs one; beyond the most
// recently used idle ones, a dormant entry of a few dozen bytes: dormant.go).
// Any process that holds the same store can serve it: a session the table
// does not know is loaded from the store on its first request (after a
// restart, or when another replica created it). The table is bounded
// (Config.MaxSessions, whole and dormant sessions together) and enforces the
// idle timeout while the bridge runs: an expired session answers 404 and its
// entry, go-sdk half and record are released.

// DefaultMaxSessionsPerCPU sizes the default session bound: an idle session
// costs well under 1 KiB in the table (dormant.go), so the bound protects the process from a
// client that opens sessions in a loop long before memory is at risk.
const DefaultMaxSessionsPerCPU = 25000

// defaultMaxSessions is DefaultMaxSessionsPerCPU per CPU of the machine.
func defaultMaxSessions() int { return DefaultMaxSessionsPerCPU * runtime.NumCPU() }

// storeTouchEvery bounds how often a busy session slides its stored idle
// expiry: the table's clock is exact, the record's may lag by this much
// (another replica sees the session expire at most this much early).
func (b *Bridge) storeTouchEvery() time.Duration {
	idle := b.cfg.SessionIdleTimeout
	if idle <= 0 {
		return 5 * time.Second
	}
	return min(idle/10, 5*time.Second)
}

func (b *Bridge) now() time.Time { return b.cfg.Clock() }

// expiredLocked reports whether s has been idle longer than the timeout
// (b.mu held). A session with a request in flight is never idle.
func (b *Bridge) expiredLocked(s *session, now time.Time) bool {
	idle := b.cfg.SessionIdleTimeout
	return idle > 0 && s.busy == 0 && now.Sub(s.lastSeen) > idle
}

// errTooManySessions is the answer beyond Config.MaxSessions (HTTP 503: the
// process's limit, not the client's).
func (b *Bridge) errTooManySessions() *rpc.Error {
	return rpc.LimitError(limitNameSessions, rpc.LimitScopeProcess, b.maxSessions(), sessionsRetryAfter,
		"the bridge holds its maximum of %d sessions (--max-sessions); close unused sessions (HTTP DELETE) or retry later", b.maxSessions())
}

// countLocked is the number of sessions the table holds, whole and dormant
// (b.mu held).
func (b *Bridge) countLocked() int { return len(b.sessions) + len(b.dormant) }

// admit puts s, the new session of request r, in the session table, or
// refuses it: beyond its source's share of the table, or when the table is
// full of sessions that are neither expired (released first) nor idle
// without credentials (the least recently used of those makes room:
// sessionshare.go).
func (b *Bridge) admit(r *http.Request, s *session) *rpc.Error {
	s.source = sourceOf(r, s.principal)
	_, err := b.admitSession(s, true)
	return err
}

// fullSweepEvery bounds how often a full table is swept for expired
// sessions on admission (a sweep visits every session; a flood against a
// full table must not make each refusal or eviction pay for one).
const fullSweepEvery = time.Second

// admitSession is admit (share: whether s counts against its source's
// share; a session loaded from the store is no new session of its client's
// and does not); a dormant entry of the same session is replaced by s
// (wasDormant), which is no new session, so never refused. s.source must be
// set.
func (b *Bridge) admitSession(s *session, share bool) (wasDormant bool, _ *rpc.Error) {
	now := b.now()
	b.mu.Lock()
	d, _, wasDormant, _ := b.takeDormantLocked(s.id, s.principal)
	if wasDormant {
		s.source = d.source // counted already, by the source it was admitted for
	}
	var expired []*session
	var evicted *session
	refused := ""
	if !wasDormant {
		if b.countLocked() >= b.maxSessions() && now.Sub(b.pool.lastFullSweep) >= fullSweepEvery {
			b.pool.lastFullSweep = now
			expired = b.sweepLocked(now)
		}
		switch {
		case share && b.shareFullLocked(s.source):
			refused = limitNameSessionShare
		case b.countLocked() < b.maxSessions():
		default:
			if evicted = b.evictLocked(s.source); evicted == nil {
				refused = limitNameSessions
			}
		}
	}
	if refused == "" {
		s.lastSeen, s.storeTouch, s.inTable = now, now, true
		b.sessions[s.id] = s
		b.sessionsPeak = max(b.sessionsPeak, len(b.sessions))
		if !wasDormant {
			k, keyed := keyOf(s.id)
			b.heldLocked(s.source, k, keyed, now)
		}
	}
	b.mu.Unlock()
	b.release(expired)
	if evicted != nil {
		b.logEvicted()
		b.endSession(evicted, true)
	}
	if refused != "" {
		if h := b.cfg.Hooks.Refused; h != nil {
			h(RefusedEvent{Limit: LimitSessions})
		}
		b.logRefused(refused == limitNameSessionShare, s.source)
		if refused == limitNameSessionShare {
			return false, b.errSessionShare(anonymous(s.source))
		}
		return false, b.errTooManySessions()
	}
	return wasDormant, nil
}

// storeSession records a new session durably (before its initialize is
// answered).
func (b *Bridge) storeSession(ctx context.Context, s *session, protocolVersion string, initParams json.RawMessage) error {
	s.mu.Lock()
	s.protocolVersion = protocolVersion
	s.mu.Unlock()
	err := b.store.CreateSession(ctx, sessionmap.Session{
		ID:               s.id,
		Principal:        s.principal,
		Era:              era.Legacy,
		ProtocolVersion:  protocolVersion,
		InitializeParams: initParams,
		IdleTimeoutMs:    max(b.cfg.SessionIdleTimeout.Milliseconds(), 0),
	})
	if err != nil {
		return rpc.Errorf(rpc.CodeInternalError, "internal error: cannot record the session: %v", err)
	}
	return nil
}

// sessionEvent reports a session lifecycle step to the hooks.
func (b *Bridge) sessionEvent(kind string, s *session) {
	if h := b.cfg.Hooks.Session; h != nil {
		ev := SessionEvent{Kind: kind, Transport: s.transport}
		if s.transport == transportHTTP {
			ev.ID = s.id
		}
		h(ev)
	}
}

// sessionStarted marks an admitted session as open (it counts in the
// metrics until it ends).
func (b *Bridge) sessionStarted(s *session) {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	b.sessionEvent("start", s)
	b.mu.Lock()
	over := b.idleLocked(s)
	b.mu.Unlock()
	if over {
		b.demoteOverflow()
	}
}

// dropSession removes s from the table and ends it; deleteRecord also
// removes its store record (idle expiry).
func (b *Bridge) dropSession(s *session, deleteRecord bool) {
	b.mu.Lock()
	if b.sessions[s.id] == s {
		delete(b.sessions, s.id)
		_, keyed := keyOf(s.id)
		b.unheldLocked(s.source, keyed)
	}
	s.inTable = false
	b.idle.remove(s)
	b.mu.Unlock()
	b.endSession(s, deleteRecord)
}

func (b *Bridge) endSession(s *session, deleteRecord bool) {
	s.mu.Lock()
	started := s.started
	s.started = false
	s.mu.Unlock()
	s.close()
	if started {
		b.sessionEvent("end", s)
	}
	if deleteRecord {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.store.DeleteSession(ctx, s.scope()); err != nil && !errors.Is(err, sessionmap.ErrNotFound) {
			b.log.Warn("face: cannot delete an expired session", "err", err)
		}
	}
}

// sweepLocked takes every expired session out of the table (b.mu held);
// the caller releases them after unlocking.
func (b *Bridge) sweepLocked(now time.Time) []*session {
	var out []*session
	for id, s := range b.sessions {
		if b.expiredLocked(s, now) {
			delete(b.sessions, id)
			_, keyed := keyOf(id)
			b.unheldLocked(s.source, keyed)
			s.inTable = false
			b.idle.remove(s)
			out = append(out, s)
		}
	}
	for k, p := range b.dormant {
		if b.expiredDormant(p, now) {
			delete(b.dormant, k)
			b.unheldLocked(p.source, true)
			out = append(out, b.dormantSession(k, p))
		}
	}
	b.sessions = shrunk(b.sessions, &b.sessionsPeak)
	b.dormant = shrunk(b.dormant, &b.dormantPeak)
	return out
}

// release ends sessions taken out of the table by expiry.
func (b *Bridge) release(expired []*session) {
	for _, s := range expired {
		b.log.Debug("face: session expired after its idle timeout", "session", s.id)
		b.endSession(s, true)
	}
}

// sweep releases every expired session.
func (b *Bridge) sweep() {
	b.mu.Lock()
	expired := b.sweepLocked(b.now())
	b.mu.Unlock()
	b.release(expired)
}

// sweeper runs sweep on a timer while the bridge runs, so idle sessions are
// released even when nobody asks for them again.
func (b *Bridge) sweeper() {
	idle := b.cfg.SessionIdleTimeout
	if idle <= 0 {
		return
	}
	every := min(max(idle/2, time.Second), time.Minute)
	b.goBackground(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				b.sweep()
			case <-b.drain.Done():
				return
			}
		}
	})
}

// Sessions returns the number of legacy HTTP sessions in the session table,
// whole and dormant (metrics, tests).
func (b *Bridge) Sessions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.countLocked()
}

// DormantSessions returns how many of them go dormant (tests).
func (b *Bridge) DormantSessions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.dormant)
}

// resolveSession finds session sid of principal for one request: from the
// table, or loaded from the store (a restart, or another process created
// it). A session of another principal is reported like an unknown one
// (404), so is an expired one (and it is released). The caller must call
// done when the request is over.
func (b *Bridge) resolveSession(r *http.Request, sid, principal string) (s *session, status int, done func()) {
	now := b.now()
	b.mu.Lock()
	s = b.sessions[sid]
	if s != nil {
		if s.principal != principal {
			b.mu.Unlock()
			return nil, http.StatusNotFound, nil
		}
		if b.expiredLocked(s, now) {
			delete(b.sessions, sid)
			_, keyed := keyOf(sid)
			b.unheldLocked(s.source, keyed)
			s.inTable = false
			b.idle.remove(s)
			b.mu.Unlock()
			b.release([]*session{s})
			return nil, http.StatusNotFound, nil
		}
		s.lastSeen = now
		s.busy++
		b.idle.remove(s)
		touch := now.Sub(s.storeTouch) >= b.storeTouchEvery()
		if touch {
			s.storeTouch = now
		}
		b.mu.Unlock()
		if touch {
			if _, err := b.store.TouchSession(r.Context(), s.scope(), nil); err != nil {
				if errors.Is(err, sessionmap.ErrNotFound) {
					// Deleted or expired in the store (e.g. by another
					// replica): the record is the truth.
					b.unbusy(s)
					b.dropSession(s, false)
					return nil, http.StatusNotFound, nil
				}
				b.log.Warn("face: cannot touch session", "err", err)
			}
		}
		return s, http.StatusOK, func() { b.unbusy(s) }
	}
	if k, ok := keyOf(sid); ok {
		if p, ok := b.dormant[k]; ok {
			switch {
			case p.principal.Value() != principal:
				b.mu.Unlock()
				return nil, http.StatusNotFound, nil
			case b.expiredDormant(p, now):
				delete(b.dormant, k)
				b.unheldLocked(p.source, true)
				b.mu.Unlock()
				b.release([]*session{b.dormantSession(k, p)})
				return nil, http.StatusNotFound, nil
			}
		}
	}
	b.mu.Unlock()
	// Not whole in the table: dormant, or unknown here. Either way the
	// store has it (load promotes a dormant entry in place).
	s, err := b.load(r.Context(), sid, principal, sourceOf(r, principal))
	if err != nil {
		var re *rpc.Error
		switch {
		case errors.Is(err, sessionmap.ErrNotFound):
			// Gone from the store (deleted or expired by another
			// replica): a dormant entry of it ends too.
			b.mu.Lock()
			p, k, ok := b.dropDormantLocked(sid, principal)
			b.mu.Unlock()
			if ok {
				b.endSession(b.dormantSession(k, p), false)
			}
			return nil, http.StatusNotFound, nil
		case errors.As(err, &re):
			return nil, http.StatusServiceUnavailable, nil
		}
		b.log.Warn("face: cannot load session", "err", err)
		return nil, http.StatusInternalServerError, nil
	}
	return s, http.StatusOK, func() { b.unbusy(s) }
}

func (b *Bridge) unbusy(s *session) {
	now := b.now()
	b.mu.Lock()
	s.busy--
	s.lastSeen = now
	over := b.idleLocked(s)
	b.mu.Unlock()
	if over {
		b.demoteOverflow()
	}
}

// load reads session sid from the store into the table (one load at a time
// per id) and marks it busy; src is the source of the request that needs it
// (the share it counts against unless it was dormant here).
func (b *Bridge) load(ctx context.Context, sid, principal string, src source) (*session, error) {
	b.mu.Lock()
	lk := b.rehydrates[sid]
	if lk == nil {
		lk = &sync.Mutex{}
		b.rehydrates[sid] = lk
	}
	b.mu.Unlock()
	lk.Lock()
	defer func() {
		lk.Unlock()
		b.mu.Lock()
		if b.rehydrates[sid] == lk {
			delete(b.rehydrates, sid)
		}
		b.mu.Unlock()
	}()
	b.mu.Lock()
	if s := b.sessions[sid]; s != nil {
		defer b.mu.Unlock()
		if s.principal != principal {
			return nil, sessionmap.ErrNotFound
		}
		s.busy++
		s.lastSeen = b.now()
		b.idle.remove(s)
		return s, nil
	}
	b.mu.Unlock()
	if len(sid) > sessionmap.MaxIDLen {
		return nil, sessionmap.ErrNotFound
	}
	rec, err := b.store.TouchSession(ctx, sessionmap.Scope{Principal: principal, Session: sid}, nil)
	if err != nil {
		return nil, err
	}
	if rec.Era != era.Legacy || len(rec.InitializeParams) == 0 {
		return nil, sessionmap.ErrNotFound
	}
	s := b.newSession(sid, principal, transportHTTP)
	s.source = src
	s.initParams = rec.InitializeParams
	s.logLevel = rec.LogLevel
	s.protocolVersion = rec.ProtocolVersion
	if s.protocolVersion == "" {
		s.protocolVersion = legacy.ProtocolVersion
	}
	wasDormant, rerr := b.admitSession(s, false)
	if rerr != nil {
		return nil, rerr
	}
	b.mu.Lock()
	s.busy++
	s.started = true
	b.mu.Unlock()
	if wasDormant {
		// Dormant sessions never stopped counting as open.
		return s, nil
	}
	b.sessionEvent("rehydrate", s)
	b.log.Debug("face: session loaded from the store", "session", sid)
	return s, nil
}

// materialize gives s its go-sdk half (a go-sdk server and session under
// the same id) for a request only go-sdk serves: the stored initialize,
// notifications/initialized and log level are replayed through go-sdk's
// own handler exactly as the client once sent them (see the package doc).
// The half is dropped again when go-sdk ends it (its idle timeout); the
// session lives on as a record.
func (b *Bridge) materialize(r *http.Request, s *session) error {
	s.sdkMu.Lock()
	defer s.sdkMu.Unlock()
	if s.serverSession() != nil {
		return nil
	}
	s.mu.Lock()
	initParams, logLevel, proto := s.initParams, s.logLevel, s.protocolVersion
	s.rehydrating = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.rehydrating = false
		s.mu.Unlock()
	}()
	srv := b.newServer(s)
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()

	replay := func(sessionHeader bool, body []byte) int {
		ctx := r.Context()
		if !sessionHeader {
			ctx = context.WithValue(ctx, serverKey{}, srv)
		}
		q := r.Clone(ctx)
		q.Method = http.MethodPost
		q.Header = http.Header{}
		q.Header.Set("Content-Type", "application/json")
		q.Header.Set("Accept", "application/json, text/event-stream")
		if a := credentialOf(r); a != "" {
			q.Header.Set("Authorization", a)
		}
		if sessionHeader {
			q.Header.Set(hdrSessionID, s.id)
			q.Header.Set(hdrProtocolVersion, proto)
		}
		q.Body = io.NopCloser(bytes.NewReader(body))
		q.ContentLength = int64(len(body))
		dw := newDiscardWriter()
		b.sdk.ServeHTTP(dw, q)
		return dw.status()
	}
	fail := func(err error) error {
		s.mu.Lock()
		ss := s.ss
		s.ss, s.srv = nil, nil
		s.mu.Unlock()
		if ss != nil {
			ss.Close()
		}
		return err
	}
	initReq, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": "tasksbridge-rehydrate-1", "method": legacy.MethodInitialize,
		"params": json.RawMessage(initParams),
	})
	if err != nil {
		return fail(fmt.Errorf("face: rehydrate: %w", err))
	}
	if code := replay(false, initReq); code != http.StatusOK || s.serverSession() == nil {
		return fail(fmt.Errorf("face: rehydrate: replayed initialize answered %d", code))
	}
	if code := replay(true, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); code != http.StatusAccepted {
		return fail(fmt.Errorf("face: rehydrate: replayed notifications/initialized answered %d", code))
	}
	if logLevel != "" {
		lvl, _ := json.Marshal(logLevel)
		body := []byte(`{"jsonrpc":"2.0","id":"tasksbridge-rehydrate-2","method":"logging/setLevel","params":{"level":` + string(lvl) + `}}`)
		if code := replay(true, body); code != http.StatusOK {
			return fail(fmt.Errorf("face: rehydrate: replayed logging/setLevel answered %d", code))
		}
	}
	ss := s.serverSession()
	go func() {
		_ = ss.Wait()
		s.dropSDK(ss)
	}()
	b.log.Debug("face: session served by go-sdk", "session", s.id)
	return nil
}

// dropSDK forgets the go-sdk half ss once go-sdk ended it; the session's
// subscriptions (which live on that half) end with it.
func (s *session) dropSDK(ss interface{ Close() error }) {
	s.mu.Lock()
	if s.ss == nil || any(s.ss) != ss {
		s.mu.Unlock()
		return
	}
	s.ss, s.srv = nil, nil
	subs := s.subs
	s.subs = nil
	s.mu.Unlock()
	if subs != nil {
		subs.close()
	}
}

// principalOrSession is the key of the per-principal limits: the
// principal, or the session for a client without credentials.
func (s *session) principalOrSession() string {
	if s.principal != "" {
		return "p:" + s.principal
	}
	return "s:" + s.id
}
