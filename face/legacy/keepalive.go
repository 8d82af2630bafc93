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

// streams is the set of open long streams.
type streams struct {
	mu  sync.Mutex
	set map[keepAliver]struct{}
}

func (s *streams) add(k keepAliver) {
	s.mu.Lock()
	if s.set == nil {
		s.set = map[keepAliver]struct{}{}
	}
	s.set[k] = struct{}{}
	s.mu.Unlock()
}

func (s *streams) remove(k keepAliver) {
	s.mu.Lock()
	delete(s.set, k)
	s.mu.Unlock()
}

func (s *streams) each(f func(keepAliver)) {
	s.mu.Lock()
	all := make([]keepAliver, 0, len(s.set))
	for k := range s.set {
		all = append(all, k)
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
// drains.
func (b *Bridge) keepAlives() {
	if b.cfg.KeepAlive <= 0 {
		return
	}
	b.goBackground(func() {
		t := time.NewTicker(b.cfg.KeepAlive)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				b.alive.each(func(k keepAliver) { k.keepAlive() })
				b.beat.fire()
			case <-b.drain.Done():
				return
			}
		}
	})
}
