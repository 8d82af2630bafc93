// Package steps runs short units of work that arrive in bursts on a bounded
// number of goroutines.
//
// The bridge's event-driven parts (parked watchers, the hubs of parked
// waits) keep no goroutine while nothing happens, and take a step when an
// event pokes them. Pokes come in bursts: thousands of tasks created or
// pushed together, each delivery waking its watcher or hub for a step that
// reads or writes the store. A goroutine per poke makes each of them a
// goroutine, with a stack that also raises the collector's heap goal, for
// as long as the store keeps it waiting; on a Runner they cost a queue
// entry, and at most its limit of steps run at once, taking queued steps in
// turn (FIFO).
//
// A step holds its place only while it works in memory or on the store. One
// that is about to wait on something outside the process (an upstream
// request, a client's socket) or to keep its goroutine calls Slot.Detach
// first: its place goes to the next queued step, and it goes on unbounded.
// So a stalled upstream or client holds goroutines, never the other steps.
package steps

import "sync"

// Runner runs steps, at most its limit at once.
type Runner struct {
	max int

	mu      sync.Mutex
	running int           // places held (each a goroutine taking steps)
	q       []func(*Slot) // FIFO; q[head:] is pending
	head    int
}

// Slot is a running step's place in its Runner. A nil *Slot is a step that
// runs outside any Runner (Detach does nothing).
type Slot struct {
	r    *Runner
	held bool
}

// New returns a Runner of at most limit (≥ 1) steps at once.
func New(limit int) *Runner { return &Runner{max: max(limit, 1)} }

// Run takes f as a step: now on a goroutine of its own when a place is
// free, else once a running step ends or detaches.
func (r *Runner) Run(f func(*Slot)) {
	r.mu.Lock()
	if r.running >= r.max {
		if r.head > 64 && r.head > len(r.q)/2 {
			// Never drained under steady load: drop the taken prefix
			// rather than let the backing array grow with it.
			n := copy(r.q, r.q[r.head:])
			clear(r.q[n:])
			r.q, r.head = r.q[:n], 0
		}
		r.q = append(r.q, f)
		r.mu.Unlock()
		return
	}
	r.running++
	r.mu.Unlock()
	go r.work(f)
}

// Pending returns the number of steps waiting for a place.
func (r *Runner) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.q) - r.head
}

// Running returns the number of places held.
func (r *Runner) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running
}

// nextLocked pops the oldest pending step, whose goroutine keeps the
// caller's place; ok false (the place is given up) when none is left.
func (r *Runner) nextLocked() (f func(*Slot), ok bool) {
	if r.head == len(r.q) {
		r.running--
		r.q, r.head = nil, 0 // let a burst's backing array go
		return nil, false
	}
	f = r.q[r.head]
	r.q[r.head] = nil
	r.head++
	return f, true
}

// work takes steps until none is pending or the current one detached.
func (r *Runner) work(f func(*Slot)) {
	for {
		sl := &Slot{r: r, held: true}
		f(sl)
		if !sl.held {
			return // detached: its place went on with the queue
		}
		r.mu.Lock()
		var ok bool
		f, ok = r.nextLocked()
		r.mu.Unlock()
		if !ok {
			return
		}
	}
}

// Detach gives the step's place up before it waits on something outside
// the process or keeps its goroutine: the next pending step starts on a
// goroutine of its own, and this one goes on unbounded. Only the step's own
// goroutine may call it; safe on nil and more than once.
func (sl *Slot) Detach() {
	if sl == nil || !sl.held {
		return
	}
	sl.held = false
	r := sl.r
	r.mu.Lock()
	f, ok := r.nextLocked()
	r.mu.Unlock() // ok: the place passes on to f
	if ok {
		go r.work(f)
	}
}
