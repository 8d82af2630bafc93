package watch

import (
	"container/heap"
	"sync"
	"time"
)

// parkTimers wakes parked watchers at their next step (a safety read, idle
// retirement, a re-listen after backoff, a poll): one timer per Manager, a
// min-heap of the parked watchers' wake times driven by one FuncTimer,
// rather than a timer per parked watcher (docs/ARCHITECTURE.md, One watcher
// per upstream task: a wait parked on each of thousands of distinct tasks
// then costs its place in the heap, not a runtime timer and its record).
//
// It has no granularity: a watcher is poked once the Clock reaches its wake
// time, as its own timer did. A wake that fires a little early (the clock
// read before arming and the runtime's timer disagree by a tick) pokes
// nothing and arms again; a watcher poked before its time (another event)
// looks at its state and parks again, so nothing runs early that must not.
type parkTimers struct {
	mu sync.Mutex
	h  timerHeap
	t  FuncTimer // made at the first schedule, then reset
	// base is the clock's time at the first schedule; wake times are kept
	// as durations since it (a word per parked watcher, not a time.Time),
	// on the clock's monotonic reading.
	base  time.Time
	armed time.Duration // when t fires, since base (0: not armed)
}

// timerHeap orders parked watchers by wakeAt; each knows its place (hidx).
type timerHeap []*watcher

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].wakeAt < h[j].wakeAt }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = int32(i+1), int32(j+1)
}
func (h *timerHeap) Push(x any) {
	w := x.(*watcher)
	w.hidx = int32(len(*h) + 1)
	*h = append(*h, w)
}
func (h *timerHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	w.hidx = 0
	return w
}

// schedule pokes w at at (replacing its previous wake time).
func (m *Manager) schedule(w *watcher, af afterFuncer, at time.Time) {
	pt := &m.timers
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.base.IsZero() {
		pt.base = m.cfg.Clock.Now().Add(-time.Second) // so that 0 means "not armed"
	}
	w.wakeAt = at.Sub(pt.base)
	if w.hidx > 0 {
		heap.Fix(&pt.h, int(w.hidx-1))
	} else {
		heap.Push(&pt.h, w)
	}
	m.armLocked(af)
}

// unschedule drops w's wake time (it was poked, or ends).
func (m *Manager) unschedule(w *watcher) {
	pt := &m.timers
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if w.hidx > 0 {
		heap.Remove(&pt.h, int(w.hidx-1))
	}
	// The timer stays armed for a wake time that may be gone: it then
	// finds nothing due and arms for the next one.
}

// armLocked arms the timer for the earliest wake time unless it is armed
// for that time or sooner.
func (m *Manager) armLocked(af afterFuncer) {
	pt := &m.timers
	if len(pt.h) == 0 {
		return
	}
	at := pt.h[0].wakeAt
	if pt.armed != 0 && at >= pt.armed {
		return
	}
	pt.armed = at
	d := max(pt.base.Add(at).Sub(m.cfg.Clock.Now()), 0)
	if pt.t == nil {
		pt.t = af.AfterFunc(d, func() { m.fireTimers(af) })
	} else {
		pt.t.Reset(d)
	}
}

// fireTimers pokes every parked watcher whose wake time has come and arms
// the timer for the next one.
func (m *Manager) fireTimers(af afterFuncer) {
	pt := &m.timers
	pt.mu.Lock()
	pt.armed = 0
	now := m.cfg.Clock.Now().Sub(pt.base)
	var due []*watcher
	for len(pt.h) > 0 && now >= pt.h[0].wakeAt {
		due = append(due, heap.Pop(&pt.h).(*watcher))
	}
	m.armLocked(af)
	pt.mu.Unlock()
	for _, w := range due {
		w.poke()
	}
}

// stopTimers stops the timer (Manager.Close, once no watcher is parked).
func (m *Manager) stopTimers() {
	pt := &m.timers
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.t != nil {
		pt.t.Stop()
	}
	pt.armed = 0
}
