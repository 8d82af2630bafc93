package demo

import (
	"sort"
	"sync"
	"time"
)

// Clock is the time source of a Server: timestamps, TTL expiry and the delays
// of slow_task, fail_task and error_task. Tests inject a *FakeClock so no
// task depends on wall-clock sleeps.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine (real clock) or synchronously
	// from Advance (fake clock) once d has elapsed. stop cancels a pending
	// call and reports whether it did.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// FakeClock is a manually advanced Clock for deterministic tests.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers map[uint64]*fakeTimer
}

type fakeTimer struct {
	seq uint64
	at  time.Time
	f   func()
}

// NewFakeClock returns a FakeClock reading start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, timers: map[uint64]*fakeTimer{}}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc registers f to run when the clock has been advanced by d. A d of
// zero or less still waits for the next Advance (even Advance(0)), so that
// registering never runs user code re-entrantly.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{seq: c.seq, at: c.now.Add(d), f: f}
	c.timers[t.seq] = t
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.timers[t.seq]
		delete(c.timers, t.seq)
		return ok
	}
}

// Advance moves the clock forward by d and runs every timer that became due,
// in due order, synchronously, before returning.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	var due []*fakeTimer
	for k, t := range c.timers {
		if !t.at.After(now) {
			due = append(due, t)
			delete(c.timers, k)
		}
	}
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool {
		if !due[i].at.Equal(due[j].at) {
			return due[i].at.Before(due[j].at)
		}
		return due[i].seq < due[j].seq
	})
	for _, t := range due {
		t.f()
	}
}

// Pending reports how many timers are waiting.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
