package legacyup

import (
	"context"
	"fmt"
	"strings"
	"sync"

	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Era is the protocol era of a peer (modern-tasks.md §3.4); it is
// upstream/modern's type, shared so that a dispatcher compares client and
// upstream eras with one vocabulary.
type Era = modernup.Era

// The eras.
const (
	EraUnknown = modernup.EraUnknown
	EraModern  = modernup.EraModern
	EraLegacy  = modernup.EraLegacy
)

// EraMode is the --upstream-era setting.
type EraMode string

// The three modes.
const (
	// EraAuto probes server/discover and falls back to initialize (legacy)
	// on any non-modern outcome (§3.4; the Inspector's "auto").
	EraAuto EraMode = "auto"
	// EraPinLegacy never probes: the upstream speaks 2025-11-25.
	EraPinLegacy EraMode = "legacy"
	// EraPinModern never probes and never falls back: 2026-07-28.
	EraPinModern EraMode = "modern"
)

// ParseEraMode reads "auto", "legacy" or "modern" (case-insensitive; "" is
// auto).
func ParseEraMode(s string) (EraMode, error) {
	switch m := EraMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return EraAuto, nil
	case EraAuto, EraPinLegacy, EraPinModern:
		return m, nil
	}
	return "", fmt.Errorf("invalid upstream era %q: want auto, legacy or modern", s)
}

// EraSelector decides which era the upstream speaks and caches the answer
// (M-08: per origin or process; re-probe when the assumption fails). A pinned
// mode answers at once. In auto mode the first call probes with Probe —
// typically upstream/modern's Client.ProbeEra, which sends server/discover and
// reports legacy for any non-modern outcome without keying on one error code
// (M-06, M-07); the legacy path then opens its sessions with initialize. An
// unreachable upstream (EraUnknown) is not cached, so the next call probes
// again. Safe for concurrent use; concurrent callers share one probe.
type EraSelector struct {
	Mode  EraMode
	Probe func(ctx context.Context) (Era, error)

	mu      sync.Mutex
	cached  Era
	probing chan struct{}
}

// Era returns the upstream's era, probing in auto mode when nothing is cached.
func (e *EraSelector) Era(ctx context.Context) (Era, error) {
	switch e.Mode {
	case EraPinLegacy:
		return EraLegacy, nil
	case EraPinModern:
		return EraModern, nil
	}
	for {
		e.mu.Lock()
		if e.cached != EraUnknown {
			era := e.cached
			e.mu.Unlock()
			return era, nil
		}
		if e.probing != nil {
			wait := e.probing
			e.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return EraUnknown, ctx.Err()
			}
		}
		done := make(chan struct{})
		e.probing = done
		e.mu.Unlock()

		era, err := EraUnknown, fmt.Errorf("upstream era: no probe configured")
		if e.Probe != nil {
			era, err = e.Probe(ctx)
		}
		e.mu.Lock()
		if era != EraUnknown {
			e.cached = era
		}
		e.probing = nil
		close(done)
		e.mu.Unlock()
		if era == EraUnknown {
			if err == nil {
				err = fmt.Errorf("upstream era: probe was inconclusive")
			}
			return EraUnknown, err
		}
		return era, nil
	}
}

// Cached returns the cached era (EraUnknown when none; pinned modes report
// their era).
func (e *EraSelector) Cached() Era {
	switch e.Mode {
	case EraPinLegacy:
		return EraLegacy
	case EraPinModern:
		return EraModern
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cached
}

// Invalidate drops the cached answer (auto mode): call it when the upstream
// stops behaving like the era it was probed as (an initialize refused with a
// modern error, a modern request answered like a legacy server, an upstream
// that restarted); the next Era probes again.
func (e *EraSelector) Invalidate() {
	e.mu.Lock()
	e.cached = EraUnknown
	e.mu.Unlock()
}

// ProbeWith returns an EraSelector probe that sends server/discover with the
// modern upstream client c (upstream/modern's ProbeEra): a DiscoverResult or a
// recognised modern error means modern, anything else legacy — the legacy
// path then opens its sessions with initialize (§3.4, M-06, M-07).
func ProbeWith(c *modernup.Client) func(ctx context.Context) (Era, error) {
	return func(ctx context.Context) (Era, error) { return c.ProbeEra(ctx) }
}
