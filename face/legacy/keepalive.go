package legacyface

import (
	"sync"
	"time"
)

// One ticker per process keeps every long stream alive: it writes an SSE
// comment on each open stream at Config.KeepAlive, so idle proxies do not
// cut them, and wakes the waits that repeat a task's progress at the same
// cadence (L-63). Waiters own no timer and no goroutine for it.

// keepAliver is an open stream the ticker writes to.
type keepAliver interface{ keepAlive() }

// The beat is spread over its interval: each stream gets a phase (one of
// up to maxPhases slots, handed out in turn as streams open) and the ticker
// wakes once per slot, writing only that slot's streams. Every stream still
// gets one keep-alive per interval, but 10,000 parked streams no longer get
// theirs in one burst of write syscalls that holds a core while other
// clients' requests queue behind it.
const (
	maxPhases     = 64
	minPhaseSlice = 250 * time.Millisecond
)

// phasesFor is how many slots a keep-alive interval is cut into: one per
// minPhaseSlice, between 1 and maxPhases (a short test interval gets one).
func phasesFor(interval time.Duration) int {
	n := int(interval / minPhaseSlice)
	return max(1, min(n, maxPhases))
}

// slotted is a stream that keeps its own phase slot (guarded by
// streams.mu; 0: in no set, else the phase + 1), so the set keeps no entry
// of its own for it: a parked wait's stream (leanOut) is one.
type slotted interface{ phaseSlot() *uint8 }

// streams is the set of open long streams, by phase.
type streams struct {
	mu     sync.Mutex
	phases []map[keepAliver]struct{}
	of     map[keepAliver]int // the phase of each stream that is not slotted
	n      int                // streams in the set
	next   int                // the phase the next stream gets
}

// setPhases cuts the beat into n slots; call before any stream is added.
func (s *streams) setPhases(n int) {
	s.mu.Lock()
	if s.n == 0 {
		s.phases = make([]map[keepAliver]struct{}, max(n, 1))
	}
	s.mu.Unlock()
}

func (s *streams) add(k keepAliver) {
	s.mu.Lock()
	if s.phases == nil {
		s.phases = make([]map[keepAliver]struct{}, 1)
	}
	var slot *uint8
	if sl, ok := k.(slotted); ok {
		slot = sl.phaseSlot()
		if *slot != 0 {
			s.mu.Unlock()
			return
		}
	} else if _, ok := s.of[k]; ok {
		s.mu.Unlock()
		return
	}
	ph := s.next
	s.next = (s.next + 1) % len(s.phases)
	if s.phases[ph] == nil {
		s.phases[ph] = map[keepAliver]struct{}{}
	}
	s.phases[ph][k] = struct{}{}
	s.n++
	if slot != nil {
		*slot = uint8(ph + 1) // ph < maxPhases
	} else {
		if s.of == nil {
			s.of = map[keepAliver]int{}
		}
		s.of[k] = ph
	}
	s.mu.Unlock()
}

func (s *streams) remove(k keepAliver) {
	s.mu.Lock()
	if sl, ok := k.(slotted); ok {
		if slot := sl.phaseSlot(); *slot != 0 {
			delete(s.phases[*slot-1], k)
			*slot = 0
			s.n--
		}
	} else if ph, ok := s.of[k]; ok {
		delete(s.phases[ph], k)
		delete(s.of, k)
		s.n--
	}
	s.mu.Unlock()
}

// phase calls f on each stream of slot ph (taken modulo the slot count).
func (s *streams) phase(ph int, f func(keepAliver)) {
	s.mu.Lock()
	var all []keepAliver
	if n := len(s.phases); n > 0 {
		set := s.phases[ph%n]
		all = make([]keepAliver, 0, len(set))
		for k := range set {
			all = append(all, k)
		}
	}
	s.mu.Unlock()
	for _, k := range all {
		f(k)
	}
}

// heartbeat broadcasts the ticker's beats: next returns a channel that is
// closed at the next beat.
type heartbeat struct {
	mu sync.Mutex
	ch chan struct{}
}

func (h *heartbeat) next() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ch == nil {
		h.ch = make(chan struct{})
	}
	return h.ch
}

func (h *heartbeat) fire() {
	h.mu.Lock()
	ch := h.ch
	h.ch = nil
	h.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// keepAlives runs the process's one keep-alive ticker until the bridge
// drains: it wakes once per phase slot (see streams) and fires the beat
// once per interval.
func (b *Bridge) keepAlives() {
	if b.cfg.KeepAlive <= 0 {
		return
	}
	n := phasesFor(b.cfg.KeepAlive)
	b.alive.setPhases(n)
	b.goBackground(func() {
		t := time.NewTicker(b.cfg.KeepAlive / time.Duration(n))
		defer t.Stop()
		for ph := 0; ; {
			select {
			case <-t.C:
				b.alive.phase(ph, func(k keepAliver) { k.keepAlive() })
				if ph++; ph == n {
					ph = 0
					b.beat.fire()
				}
			case <-b.drain.Done():
				return
			}
		}
	})
}
