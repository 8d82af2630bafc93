package legacyface

import (
	"testing"
	"time"
)

type countAliver struct{ n int }

func (c *countAliver) keepAlive() { c.n++ }

// The keep-alive beat is spread over its interval: at the default 15 s
// interval, 10,000 open streams are split into even phase slots, so no
// tick of the ticker writes to more than its share, and a full round of
// slots writes to every stream exactly once.
func TestKeepAliveBeatSpreadOverPhases(t *testing.T) {
	const streamsOpen = 10000
	n := phasesFor(15 * time.Second)
	if n < 16 {
		t.Fatalf("15 s keep-alive cut into %d phases, want ≥ 16", n)
	}
	if got := phasesFor(5 * time.Millisecond); got != 1 {
		t.Errorf("5 ms keep-alive cut into %d phases, want 1", got)
	}
	var s streams
	s.setPhases(n)
	all := make([]*countAliver, streamsOpen)
	for i := range all {
		all[i] = &countAliver{}
		s.add(all[i])
	}
	// A stream that closes is no longer written to.
	s.remove(all[0])
	most := 0
	for ph := range n {
		written := 0
		s.phase(ph, func(keepAliver) { written++ })
		most = max(most, written)
	}
	if limit := streamsOpen/n + 1; most > limit {
		t.Errorf("one tick writes to %d of %d streams, want ≤ %d (%d phases)", most, streamsOpen, limit, n)
	}
	for ph := range n {
		s.phase(ph, func(k keepAliver) { k.keepAlive() })
	}
	if all[0].n != 0 {
		t.Errorf("a removed stream got %d keep-alives", all[0].n)
	}
	for i, c := range all[1:] {
		if c.n != 1 {
			t.Fatalf("stream %d got %d keep-alives in one round of phases, want 1", i+1, c.n)
		}
	}
}
