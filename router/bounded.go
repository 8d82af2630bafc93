package router

import (
	"sync"
	"unique"
)

// boundedMap is a small concurrent map that forgets its oldest entries
// beyond a capacity, for the observer's correlation tables (sessions'
// clientInfo, pending input requests): their keys come from clients, so they
// must not grow without bound.
type boundedMap[V any] struct {
	max int

	mu    sync.Mutex
	m     map[string]boundedEntry[V]
	order []boundedKey // insertion order, lazily pruned
	seq   uint64
	peak  int // the most entries since m was last rebuilt
}

type boundedEntry[V any] struct {
	v   V
	seq uint64
}

type boundedKey struct {
	k   string
	seq uint64
}

func newBoundedMap[V any](max int) *boundedMap[V] {
	return &boundedMap[V]{max: max, m: map[string]boundedEntry[V]{}}
}

func (b *boundedMap[V]) put(k string, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	b.m[k] = boundedEntry[V]{v: v, seq: b.seq}
	b.order = append(b.order, boundedKey{k, b.seq})
	b.peak = max(b.peak, len(b.m))
	for len(b.m) > b.max && len(b.order) > 0 {
		old := b.order[0]
		b.order = b.order[1:]
		if e, ok := b.m[old.k]; ok && e.seq == old.seq {
			delete(b.m, old.k)
		}
	}
	// Compact the order slice once stale keys dominate it.
	if len(b.order) > 2*b.max+16 {
		live := b.order[:0]
		for _, o := range b.order {
			if e, ok := b.m[o.k]; ok && e.seq == o.seq {
				live = append(live, o)
			}
		}
		b.order = append([]boundedKey(nil), live...)
	}
}

func (b *boundedMap[V]) get(k string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[k]
	return e.v, ok
}

// take returns and removes k.
func (b *boundedMap[V]) take(k string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[k]
	if ok {
		delete(b.m, k)
		b.shrinkLocked()
	}
	return e.v, ok
}

// shrinkLocked rebuilds the map and the order once they hold less than a
// quarter of their peak: Go maps keep their buckets after deletes, so the
// memory of a burst of entries taken again would otherwise stay.
func (b *boundedMap[V]) shrinkLocked() {
	b.peak = max(b.peak, len(b.m))
	if b.peak < 256 || len(b.m) >= b.peak/4 {
		return
	}
	m := make(map[string]boundedEntry[V], len(b.m))
	order := make([]boundedKey, 0, len(b.m))
	for _, o := range b.order {
		if e, ok := b.m[o.k]; ok && e.seq == o.seq {
			m[o.k] = e
			order = append(order, o)
		}
	}
	b.m, b.order, b.peak = m, order, len(m)
}

func (b *boundedMap[V]) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// sessionInfos maps a legacy session id to its client's clientInfo. Clients
// are few and sessions many, so each entry holds an interned handle (one
// word) rather than its own copy of the name and version strings.
type sessionInfos struct {
	m *boundedMap[unique.Handle[implView]]
}

func newSessionInfos(max int) *sessionInfos {
	return &sessionInfos{m: newBoundedMap[unique.Handle[implView]](max)}
}

func (s *sessionInfos) put(k string, v implView) { s.m.put(k, unique.Make(v)) }

func (s *sessionInfos) get(k string) (implView, bool) {
	h, ok := s.m.get(k)
	if !ok {
		return implView{}, false
	}
	return h.Value(), true
}

func (s *sessionInfos) take(k string) (implView, bool) {
	h, ok := s.m.take(k)
	if !ok {
		return implView{}, false
	}
	return h.Value(), true
}

func (s *sessionInfos) len() int { return s.m.len() }
