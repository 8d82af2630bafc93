package legacyface

import "testing"

// The session table gives back the memory of a flood once it has gone.
func TestShrunkRebuildsAfterAFlood(t *testing.T) {
	m := map[int]int{}
	peak := 0
	for i := range 1000 {
		m[i] = i
		m = shrunk(m, &peak)
	}
	before := m
	for i := range 990 {
		delete(m, i)
	}
	m = shrunk(m, &peak)
	if len(m) != 10 || peak != 10 {
		t.Errorf("after the flood: %d entries, peak %d; want 10 and 10", len(m), peak)
	}
	before[-1] = -1
	if _, ok := m[-1]; ok {
		t.Error("the table was not rebuilt (it still shares the flood's map)")
	}
	if small := shrunk(map[int]int{1: 1}, new(int)); len(small) != 1 {
		t.Error("a small table lost entries")
	}
}

// Only ids randomID can make go dormant, and they round-trip exactly.
func TestSessionKeyRoundTrip(t *testing.T) {
	id := randomID()
	k, ok := keyOf(id)
	if !ok || k.id() != id {
		t.Fatalf("keyOf(%q) = %v %v", id, k.id(), ok)
	}
	for _, bad := range []string{"", "short", id + "A", id[:21] + "B", "AAAAAAAAAAAAAAAAAAAAA_"} {
		if k, ok := keyOf(bad); ok && k.id() != bad {
			t.Errorf("keyOf(%q) accepted a non-canonical id (round-trips to %q)", bad, k.id())
		}
	}
}
