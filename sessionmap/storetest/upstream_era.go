package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// testUpstreamEra: the upstream's remembered era (M-08: MAY persist it) is a
// named record per upstream — round trip, replace, durability across a
// reopen, expiry at the store's clock, validation — and never a session.
func testUpstreamEra(t *testing.T, e *env) {
	const a, b = "https://upstream.example/mcp", "command legacy-server --stdio"
	get := func(upstream string) (era.Era, time.Time) {
		t.Helper()
		got, at, err := e.s.UpstreamEra(e.ctx, upstream)
		if err != nil {
			t.Fatalf("UpstreamEra(%q): %v", upstream, err)
		}
		return got, at
	}
	_, _, err := e.s.UpstreamEra(e.ctx, a)
	sameNotFound(t, "UpstreamEra of a new store", err)

	setA := e.clock.Now()
	if err := e.s.SetUpstreamEra(e.ctx, a, era.Modern, 0); err != nil {
		t.Fatalf("SetUpstreamEra: %v", err)
	}
	if got, at := get(a); got != era.Modern || !at.Equal(setA) {
		t.Fatalf("UpstreamEra(a) = %v set %v, want modern set %v", got, at, setA)
	}
	_, _, err = e.s.UpstreamEra(e.ctx, b)
	sameNotFound(t, "UpstreamEra of another upstream", err)

	e.clock.Advance(time.Second)
	if err := e.s.SetUpstreamEra(e.ctx, b, era.Legacy, time.Minute); err != nil {
		t.Fatalf("SetUpstreamEra with a lifetime: %v", err)
	}
	e.clock.Advance(time.Second)
	setA = e.clock.Now()
	if err := e.s.SetUpstreamEra(e.ctx, a, era.Legacy, 0); err != nil {
		t.Fatalf("SetUpstreamEra replacing: %v", err)
	}
	e.reopen()
	if got, at := get(a); got != era.Legacy || !at.Equal(setA) {
		t.Fatalf("after a replace and a reopen: UpstreamEra(a) = %v set %v, want legacy set %v", got, at, setA)
	}
	if got, _ := get(b); got != era.Legacy {
		t.Fatalf("after a reopen: UpstreamEra(b) = %v, want legacy", got)
	}

	e.clock.Advance(time.Minute)
	_, _, err = e.s.UpstreamEra(e.ctx, b)
	sameNotFound(t, "UpstreamEra past its lifetime", err)
	if got, _ := get(a); got != era.Legacy {
		t.Fatalf("an era without a lifetime expired: %v", got)
	}

	for _, bad := range []struct {
		upstream string
		e        era.Era
		ttl      time.Duration
	}{{"", era.Modern, 0}, {a, era.Unknown, 0}, {a, era.Era("2026-07-28"), 0}, {a, era.Modern, -time.Second}} {
		if err := e.s.SetUpstreamEra(e.ctx, bad.upstream, bad.e, bad.ttl); !errors.Is(err, sessionmap.ErrInvalidArgument) {
			t.Errorf("SetUpstreamEra(%q, %q, %v) = %v, want ErrInvalidArgument", bad.upstream, bad.e, bad.ttl, err)
		}
	}
	if got, _ := get(a); got != era.Legacy {
		t.Fatalf("a refused set changed the era: %v", got)
	}

	// Not a session: the operator's session views list none.
	if adm, ok := e.s.(sessionmap.Admin); ok {
		all, err := adm.AllSessions(e.ctx)
		if err != nil || len(all) != 0 {
			t.Fatalf("AllSessions = %d sessions, %v; the upstream eras are not sessions", len(all), err)
		}
	}
}
