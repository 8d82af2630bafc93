package translate

import (
	"strconv"
	"sync/atomic"
	"time"
)

// Clock tells the time. Faces pass SystemClock; tests pass a FixedClock so a
// transcript's timestamps are exact.
type Clock interface{ Now() time.Time }

// ClockFunc adapts a function to Clock.
type ClockFunc func() time.Time

// Now calls f.
func (f ClockFunc) Now() time.Time { return f() }

// SystemClock is the wall clock.
var SystemClock Clock = ClockFunc(time.Now)

// FixedClock always returns t.
func FixedClock(t time.Time) Clock { return ClockFunc(func() time.Time { return t }) }

// IDSource mints identifiers the translation needs: JSON-RPC ids of requests
// the bridge sends to a legacy client (non-null, never reused in a session,
// L-84), elicitationIds for URL-mode elicitations (unique within the server's
// context) and inputRequests keys (unique for a task's lifetime, M-57). Faces
// back it with crypto/rand; tests with a Counter.
type IDSource interface{ NewID() string }

// IDFunc adapts a function to IDSource.
type IDFunc func() string

// NewID calls f.
func (f IDFunc) NewID() string { return f() }

// Counter is a deterministic IDSource for tests: Prefix + "1", "2", ... It is
// safe for concurrent use.
type Counter struct {
	Prefix string
	n      atomic.Int64
}

// NewID returns the next id.
func (c *Counter) NewID() string { return c.Prefix + strconv.FormatInt(c.n.Add(1), 10) }
