package legacyface

import "testing"

// The per-principal limits follow SetLimits; calls counted under a bound
// are released after the bound is lifted, so restoring it later does not
// refuse a principal for calls long gone.
func TestSetLimitsPerPrincipal(t *testing.T) {
	b := &Bridge{}
	b.SetLimits(Limits{MaxTasksPerPrincipal: 1, MaxWaitersPerPrincipal: 1})
	l := &b.limits
	if err := l.acquireTask("p"); err != nil {
		t.Fatal(err)
	}
	if err := l.acquireTask("p"); err == nil {
		t.Fatal("second call under bound 1 admitted")
	}
	b.SetLimits(Limits{MaxTasksPerPrincipal: 2})
	if err := l.acquireTask("p"); err != nil {
		t.Fatalf("second call under bound 2: %v", err)
	}
	b.SetLimits(Limits{MaxTasksPerPrincipal: -1})
	l.releaseTask("p")
	l.releaseTask("p")
	b.SetLimits(Limits{MaxTasksPerPrincipal: 1})
	if err := l.acquireTask("p"); err != nil {
		t.Fatalf("after the counted calls ended: %v", err)
	}
	if got := b.CurrentLimits(); got.MaxTasksPerPrincipal != 1 || got.MaxWaitersPerPrincipal != DefaultMaxWaitersPerPrincipal {
		t.Fatalf("CurrentLimits: %+v", got)
	}
}
