package era

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Mode is the --upstream-era setting.
type Mode string

// The three modes.
const (
	// Auto probes server/discover and serves the upstream as legacy on any
	// non-modern outcome (Upstream).
	Auto Mode = "auto"
	// PinLegacy never probes: the upstream speaks 2025-11-25.
	PinLegacy Mode = "legacy"
	// PinModern never probes and never falls back: 2026-07-28.
	PinModern Mode = "modern"
)

// ParseMode reads "auto", "legacy" or "modern" (case-insensitive; "" is
// auto).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return Auto, nil
	case Auto, PinLegacy, PinModern:
		return m, nil
	}
	return "", fmt.Errorf("invalid upstream era %q: want auto, legacy or modern", s)
}

// Pinned is the era a pinned mode names, Unknown for Auto.
func (m Mode) Pinned() Era {
	switch m {
	case PinLegacy:
		return Legacy
	case PinModern:
		return Modern
	}
	return Unknown
}

// Selector decides which era the upstream speaks and caches the answer
// (M-08: per origin or process; re-probe when the assumption fails). A
// pinned mode answers at once. In auto mode the first call runs Probe — the
// upstream client's server/discover, classified by Upstream — and caches a
// decided era; an undecided one (Unknown: the upstream is unreachable) is
// not cached, so the next call probes again. Safe for concurrent use;
// concurrent callers share one probe.
type Selector struct {
	Mode  Mode
	Probe func(ctx context.Context) (Era, error)

	mu      sync.Mutex
	cached  Era
	probing chan struct{}
}

// Era returns the upstream's era, probing in auto mode when nothing is
// cached.
func (e *Selector) Era(ctx context.Context) (Era, error) {
	if p := e.Mode.Pinned(); p != Unknown {
		return p, nil
	}
	for {
		e.mu.Lock()
		if e.cached != Unknown {
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
				return Unknown, ctx.Err()
			}
		}
		done := make(chan struct{})
		e.probing = done
		e.mu.Unlock()

		era, err := Unknown, errors.New("upstream era: no probe configured")
		if e.Probe != nil {
			era, err = e.Probe(ctx)
		}
		e.mu.Lock()
		if era != Unknown {
			e.cached = era
		}
		e.probing = nil
		close(done)
		e.mu.Unlock()
		if era == Unknown {
			if err == nil {
				err = errors.New("upstream era: probe was inconclusive")
			}
			return Unknown, err
		}
		return era, nil
	}
}

// Cached returns the cached era (Unknown when none; pinned modes report
// their era).
func (e *Selector) Cached() Era {
	if p := e.Mode.Pinned(); p != Unknown {
		return p
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cached
}

// Invalidate drops the cached answer (auto mode): call it when the upstream
// stops behaving like the era it was probed as (an initialize refused with a
// modern error, a modern request answered like a legacy server, an upstream
// that restarted); the next Era probes again.
func (e *Selector) Invalidate() {
	e.mu.Lock()
	e.cached = Unknown
	e.mu.Unlock()
}
