package router

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// The upstream's era is remembered in the store (M-08: MAY persist it), so a
// bridge restarted while its upstream is down still knows which face serves
// which client and answers what the index can answer — tasks/get, tasks/result
// and tasks/list of stored tasks — instead of 503 for everything. Only calls
// that need the upstream fail, each with its face's error naming it.
//
// The record is a session record under a principal no client can have (client
// principals are SHA-256 hex digests, or empty for anonymous requests), so it
// needs nothing beyond the sessionmap.Store every backend implements; no
// client request can read it (GetSession matches the principal).

// eraPrincipal owns the bridge's own records in the store.
const eraPrincipal = sessionmap.BridgePrincipal

// probeBackoff is how long requests use the remembered era after a failed
// probe before one of them probes again (an unreachable upstream is not
// re-probed by every request).
const probeBackoff = time.Second

// eraMemo is the remembered era of one upstream.
type eraMemo struct {
	store  sessionmap.Store
	scope  sessionmap.Scope
	target string
	log    *slog.Logger

	mu       sync.Mutex
	era      legacyup.Era // last probed (or loaded) era; EraUnknown when none
	failedAt time.Time    // last failed probe; zero while the upstream answers
}

func newEraMemo(store sessionmap.Store, target string, log *slog.Logger) *eraMemo {
	sum := sha256.Sum256([]byte(target))
	return &eraMemo{store: store, target: target, log: log,
		scope: sessionmap.Scope{Principal: eraPrincipal, Session: "upstream-era-" + hex.EncodeToString(sum[:8])}}
}

// load reads the remembered era (at start-up).
func (m *eraMemo) load(ctx context.Context) {
	rec, err := m.store.GetSession(ctx, m.scope)
	if err != nil {
		if !errors.Is(err, sessionmap.ErrNotFound) {
			m.log.Warn("cannot read the remembered upstream era from the store; it will be probed", "upstream", m.target, "err", err)
		}
		return
	}
	m.mu.Lock()
	m.era = eraOf(rec.Era)
	m.mu.Unlock()
}

func eraOf(e sessionmap.Era) legacyup.Era {
	switch e {
	case sessionmap.EraLegacy:
		return legacyup.EraLegacy
	case sessionmap.EraModern:
		return legacyup.EraModern
	}
	return legacyup.EraUnknown
}

// fallback returns the remembered era for a request made while the upstream
// cannot be probed (EraUnknown when there is none), and whether a probe failed
// within probeBackoff (the request should not probe again).
func (m *eraMemo) fallback() (legacyup.Era, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.era, !m.failedAt.IsZero() && time.Since(m.failedAt) < probeBackoff
}

// failed records a failed probe and returns the remembered era.
func (m *eraMemo) failed(err error) legacyup.Era {
	m.mu.Lock()
	first := m.failedAt.IsZero()
	m.failedAt = time.Now()
	era := m.era
	m.mu.Unlock()
	if first && era != legacyup.EraUnknown {
		m.log.Warn("upstream unreachable; serving what the task store holds as for a "+era.String()+" upstream until it answers",
			"upstream", m.target, "err", err)
	}
	return era
}

// probed records a successful probe, durably when the era changed.
func (m *eraMemo) probed(ctx context.Context, era legacyup.Era) {
	m.mu.Lock()
	recovered := !m.failedAt.IsZero()
	m.failedAt = time.Time{}
	changed := m.era != era
	m.era = era
	m.mu.Unlock()
	if recovered {
		m.log.Info("upstream reachable again", "upstream", m.target, "era", era.String())
	}
	if !changed {
		return
	}
	ctx = context.WithoutCancel(ctx)
	rec := sessionmap.Session{ID: m.scope.Session, Principal: eraPrincipal, Era: sessionmap.Era(era.String())}
	rec.InitializeParams, _ = json.Marshal(map[string]string{"upstream": m.target, "note": "the upstream's protocol era, remembered by the bridge"})
	if err := m.store.DeleteSession(ctx, m.scope); err != nil && !errors.Is(err, sessionmap.ErrNotFound) {
		m.log.Warn("cannot remember the upstream era in the store", "upstream", m.target, "err", err)
		return
	}
	if err := m.store.CreateSession(ctx, rec); err != nil {
		m.log.Warn("cannot remember the upstream era in the store", "upstream", m.target, "err", err)
	}
}
