package server

import "sync"

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
	}
	return e.v, ok
}

func (b *boundedMap[V]) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}
