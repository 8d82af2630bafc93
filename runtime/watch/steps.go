package watch

import "sync"

// stepper runs the steps of watchers that park (Config.MaxConcurrentSteps).
// Pokes come in bursts: thousands of tasks created or pushed together, each
// delivery waking its watcher for a step whose durable write queues behind
// the others' in the store. A goroutine per poke would make each of them a
// goroutine (and a stack, which also raises the collector's heap goal) for
// as long as the write waits; here they cost a queue entry, and at most
// MaxConcurrentSteps steps run at once, taking queued steps in turn.
//
// A step holds its place only while it works on the store or in memory: one
// that is about to wait on the upstream (a read, a listen of its own) or to
// keep its goroutine detaches first, and its place goes to the next queued
// step, so a stalled upstream holds goroutines (as many as reads may be in
// flight) but never the other watchers' steps.
type stepper struct {
	max int

	mu      sync.Mutex
	running int               // places held (each a goroutine taking steps)
	q       []func(*stepSlot) // FIFO; q[head:] is pending
	head    int
}

// stepSlot is a running step's place in the stepper (nil: the step runs on
// a goroutine of its own, outside any stepper).
type stepSlot struct {
	s    *stepper
	held bool
}

func newStepper(max int) *stepper { return &stepper{max: max} }

// run takes f as a step: now on a goroutine of its own when a place is
// free, else once a running step ends or detaches.
func (s *stepper) run(f func(*stepSlot)) {
	s.mu.Lock()
	if s.running >= s.max {
		if s.head > 64 && s.head > len(s.q)/2 {
			// Never drained under steady load: drop the taken prefix
			// rather than let the backing array grow with it.
			n := copy(s.q, s.q[s.head:])
			clear(s.q[n:])
			s.q, s.head = s.q[:n], 0
		}
		s.q = append(s.q, f)
		s.mu.Unlock()
		return
	}
	s.running++
	s.mu.Unlock()
	go s.work(f)
}

// nextLocked pops the oldest pending step, whose goroutine keeps the
// caller's place; ok false (the place is given up) when none is left.
func (s *stepper) nextLocked() (f func(*stepSlot), ok bool) {
	if s.head == len(s.q) {
		s.running--
		s.q, s.head = nil, 0 // let a burst's backing array go
		return nil, false
	}
	f = s.q[s.head]
	s.q[s.head] = nil
	s.head++
	return f, true
}

// work takes steps until none is pending or the current one detached.
func (s *stepper) work(f func(*stepSlot)) {
	for {
		sl := &stepSlot{s: s, held: true}
		f(sl)
		if !sl.held {
			return // detached: its place went on with the queue
		}
		s.mu.Lock()
		var ok bool
		f, ok = s.nextLocked()
		s.mu.Unlock()
		if !ok {
			return
		}
	}
}

// detach gives the step's place up before it waits on something outside
// the process or keeps its goroutine: the next pending step starts on a
// goroutine of its own. The step goes on unbounded. Safe on nil and twice.
func (sl *stepSlot) detach() {
	if sl == nil || !sl.held {
		return
	}
	sl.held = false
	s := sl.s
	s.mu.Lock()
	f, ok := s.nextLocked()
	s.mu.Unlock() // ok: the place passes on to f
	if ok {
		go s.work(f)
	}
}
