package watch

import (
	"context"
	"sync"
)

// readGate bounds the watchers' scheduled reads in flight
// (Config.MaxConcurrentReads). A watcher that finds no token free queues a
// ticket and parks: when a read ends, its token goes to the oldest ticket
// and that watcher is poked. So a burst of thousands of watchers starting
// together costs a queue entry each, not a goroutine (and its stack)
// blocked on a semaphore.
type readGate struct {
	mu   sync.Mutex
	free int
	q    []*gateTicket
}

// gateTicket is one queued wait for a token.
type gateTicket struct {
	granted   bool   // the token is the ticket holder's
	cancelled bool   // the holder gave up before it was granted
	f         func() // called (outside the lock) once granted
}

func newReadGate(n int) *readGate { return &readGate{free: n} }

// acquire takes a token (ok) or queues a ticket whose f is called once a
// token is handed to it.
func (g *readGate) acquire(f func()) (t *gateTicket, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.free > 0 && len(g.q) == 0 {
		g.free--
		return nil, true
	}
	t = &gateTicket{f: f}
	g.q = append(g.q, t)
	return t, false
}

// granted reports whether t's token was handed over.
func (g *readGate) granted(t *gateTicket) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return t.granted
}

// release returns a token: to the oldest live ticket, else to the pool.
func (g *readGate) release() {
	g.mu.Lock()
	for len(g.q) > 0 {
		t := g.q[0]
		g.q[0] = nil
		g.q = g.q[1:]
		if t.cancelled {
			continue
		}
		t.granted = true
		g.mu.Unlock()
		t.f()
		return
	}
	g.q = nil // let the backing array go once drained
	g.free++
	g.mu.Unlock()
}

// abandon gives t up; a token already handed to it is released.
func (g *readGate) abandon(t *gateTicket) {
	g.mu.Lock()
	if t.granted {
		g.mu.Unlock()
		g.release()
		return
	}
	t.cancelled = true
	g.mu.Unlock()
}

// wait takes a token, blocking until one is free or ctx ends (false).
func (g *readGate) wait(ctx context.Context) bool {
	ch := make(chan struct{}, 1)
	t, ok := g.acquire(func() { ch <- struct{}{} })
	if ok {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		g.abandon(t)
		return false
	}
}
