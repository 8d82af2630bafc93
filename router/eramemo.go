package router

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The upstream's era is remembered in the store (M-08: MAY persist it;
// sessionmap.Store's UpstreamEra), so a bridge restarted while its upstream
// is down still knows which face serves which client and answers what the
// index can answer — tasks/get, tasks/result and tasks/list of stored tasks
// — instead of 503 for everything. Only calls that need the upstream fail,
// each with its face's error naming it.

// probeBackoff is how long requests use the remembered era after a failed
// probe before one of them probes again (an unreachable upstream is not
// re-probed by every request).
const probeBackoff = time.Second

// eraMemo is the remembered era of one upstream.
type eraMemo struct {
	store  sessionmap.Store
	target string
	log    *slog.Logger

	mu       sync.Mutex
	era      era.Era   // last probed (or loaded) era; era.Unknown when none
	failedAt time.Time // last failed probe; zero while the upstream answers
}

func newEraMemo(store sessionmap.Store, target string, log *slog.Logger) *eraMemo {
	return &eraMemo{store: store, target: target, log: log}
}

// load reads the remembered era (at start-up).
func (m *eraMemo) load(ctx context.Context) {
	e, _, err := m.store.UpstreamEra(ctx, m.target)
	switch {
	case errors.Is(err, sessionmap.ErrNotFound):
		e = m.migrate(ctx)
	case err != nil:
		m.log.Warn("cannot read the remembered upstream era from the store; it will be probed", "upstream", m.target, "err", err)
		return
	}
	m.mu.Lock()
	m.era = e
	m.mu.Unlock()
}

// oldEraScope is where bridges before Store.UpstreamEra kept the era: a
// session record owned by sessionmap.BridgePrincipal, named by the
// upstream's digest.
func oldEraScope(target string) sessionmap.Scope {
	sum := sha256.Sum256([]byte(target))
	return sessionmap.Scope{Principal: sessionmap.BridgePrincipal, Session: "upstream-era-" + hex.EncodeToString(sum[:8])}
}

// migrate reads the era an older bridge left as a session record, once:
// the era is written as the named record and the old record deleted. A
// re-probe would find the era too, but not while the upstream is down, and
// that is when the remembered era matters (a bridge upgraded during an
// outage keeps serving what its index holds). It returns era.Unknown when
// there is no old record.
func (m *eraMemo) migrate(ctx context.Context) era.Era {
	sc := oldEraScope(m.target)
	rec, err := m.store.GetSession(ctx, sc)
	if err != nil {
		if !errors.Is(err, sessionmap.ErrNotFound) {
			m.log.Warn("cannot read the remembered upstream era from the store; it will be probed", "upstream", m.target, "err", err)
		}
		return era.Unknown
	}
	if err := m.store.SetUpstreamEra(ctx, m.target, rec.Era, 0); err != nil {
		// The old record stays: the next start tries again.
		m.log.Warn("cannot move the remembered upstream era to its own record", "upstream", m.target, "err", err)
		return rec.Era
	}
	if err := m.store.DeleteSession(ctx, sc); err != nil && !errors.Is(err, sessionmap.ErrNotFound) {
		m.log.Warn("cannot delete the old upstream era record", "upstream", m.target, "err", err)
	}
	return rec.Era
}

// fallback returns the remembered era for a request made while the upstream
// cannot be probed (era.Unknown when there is none), and whether a probe
// failed within probeBackoff (the request should not probe again).
func (m *eraMemo) fallback() (era.Era, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.era, !m.failedAt.IsZero() && time.Since(m.failedAt) < probeBackoff
}

// failed records a failed probe and returns the remembered era.
func (m *eraMemo) failed(err error) era.Era {
	m.mu.Lock()
	first := m.failedAt.IsZero()
	m.failedAt = time.Now()
	e := m.era
	m.mu.Unlock()
	if first && e != era.Unknown {
		m.log.Warn("upstream unreachable; serving what the task store holds as for a "+e.String()+" upstream until it answers",
			"upstream", m.target, "err", err)
	}
	return e
}

// probed records a successful probe, durably when the era changed.
func (m *eraMemo) probed(ctx context.Context, e era.Era) {
	m.mu.Lock()
	recovered := !m.failedAt.IsZero()
	m.failedAt = time.Time{}
	changed := m.era != e
	m.era = e
	m.mu.Unlock()
	if recovered {
		m.log.Info("upstream reachable again", "upstream", m.target, "era", e.String())
	}
	if !changed {
		return
	}
	if err := m.store.SetUpstreamEra(context.WithoutCancel(ctx), m.target, e, 0); err != nil {
		m.log.Warn("cannot remember the upstream era in the store", "upstream", m.target, "err", err)
	}
}
