package router

import (
	"fmt"
	"testing"
)

// A burst of entries taken again gives its memory back: the map and the
// order are rebuilt once they hold less than a quarter of their peak.
func TestBoundedMapShrinksAfterABurst(t *testing.T) {
	b := newBoundedMap[int](100_000)
	for i := range 1000 {
		b.put(fmt.Sprint(i), i)
	}
	for i := range 990 {
		if _, ok := b.take(fmt.Sprint(i)); !ok {
			t.Fatalf("take %d: missing", i)
		}
	}
	if b.len() != 10 || len(b.order) > 250 || cap(b.order) > 1000 {
		t.Errorf("after taking 990 of 1000: %d entries, order %d (cap %d); want 10 and a rebuilt order", b.len(), len(b.order), cap(b.order))
	}
	for i := 990; i < 1000; i++ {
		if v, ok := b.get(fmt.Sprint(i)); !ok || v != i {
			t.Errorf("entry %d after the rebuild: %d %v", i, v, ok)
		}
	}
	// The order still drives eviction after the rebuild.
	small := newBoundedMap[int](2)
	for i := range 300 {
		small.put(fmt.Sprint(i), i)
	}
	if small.len() != 2 {
		t.Errorf("bounded to 2: %d entries", small.len())
	}
}

// sessionInfos interns clientInfo: many sessions of one client share one
// value.
func TestSessionInfosRoundTrip(t *testing.T) {
	s := newSessionInfos(10)
	s.put("a", implView{Name: "n", Version: "1"})
	s.put("b", implView{missing: true})
	if v, ok := s.get("a"); !ok || v.Name != "n" || v.Version != "1" {
		t.Errorf("get a: %+v %v", v, ok)
	}
	if v, ok := s.take("b"); !ok || !v.missing {
		t.Errorf("take b: %+v %v", v, ok)
	}
	if _, ok := s.get("b"); ok || s.len() != 1 {
		t.Errorf("after take: len %d", s.len())
	}
}
