package watch

import "time"

// Clock is the watcher's source of time, injectable so tests drive polls
// without sleeping.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer the watcher uses.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// AfterFunc runs f on its own goroutine once d has passed (the parked
// watchers' next steps, see parkTimers).
func (realClock) AfterFunc(d time.Duration, f func()) FuncTimer {
	return time.AfterFunc(d, f)
}

// FuncTimer is the part of a *time.Timer made by time.AfterFunc that wakes
// parked watchers: one per Manager, reset for the earliest wake time.
type FuncTimer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }
