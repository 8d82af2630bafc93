package bridgeload

import (
	"context"
	"fmt"
	"time"
)

// ---- 5. idle legacy sessions ------------------------------------------

// SessionsResult is what a flood of idle legacy sessions costs a bridge
// process.
type SessionsResult struct {
	Sessions int // initialize requests sent
	Opened   int // answered with a session id
	Refused  int // answered without one (e.g. a session limit); first in FirstRefusal
	// Idle: before the flood; Loaded: after it, every session still open.
	Idle, Loaded               Mem
	RuntimeIdle, RuntimeLoaded RuntimeMem
	Elapsed                    time.Duration
	FirstRefusal               string
}

// PerSession is the resident memory one idle session adds.
func (r SessionsResult) PerSession() int64 {
	if r.Opened == 0 {
		return 0
	}
	return (r.Loaded.RSS - r.Idle.RSS) / int64(r.Opened)
}

// GoroutinesPerSession is the goroutines one idle session keeps (after a GC).
func (r SessionsResult) GoroutinesPerSession() float64 {
	if r.Opened == 0 {
		return 0
	}
	return float64(r.RuntimeLoaded.Goroutines-r.RuntimeIdle.Goroutines) / float64(r.Opened)
}

// IdleSessions sends n initialize requests one after another on one
// keep-alive connection (no Authorization, never used again: the cheapest
// flood an anonymous client can send) to the bridge at url (process pid)
// and reads the process's memory and goroutines before and after.
func IdleSessions(ctx context.Context, url string, pid, n int) (SessionsResult, error) {
	res := SessionsResult{Sessions: n}
	hc := NewHTTPClient(1)
	defer hc.CloseIdleConnections()
	var err error
	if res.RuntimeIdle, res.Idle, err = readMemory(ctx, url, pid); err != nil {
		return res, err
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		l, r, err := Initialize(ctx, hc, url)
		switch {
		case err != nil && r == nil:
			return res, fmt.Errorf("idle sessions: after %d: %w", i, err)
		case l != nil:
			res.Opened++
		default:
			res.Refused++
			if res.FirstRefusal == "" {
				res.FirstRefusal = describeRefusal(r, err)
			}
		}
	}
	res.Elapsed = time.Since(start)
	res.RuntimeLoaded, res.Loaded, err = readMemory(ctx, url, pid)
	return res, err
}

// readMemory reads the bridge's runtime breakdown (after the forced GC of
// its memstats endpoint), then its resident memory: what is kept, not the
// garbage of getting there.
func readMemory(ctx context.Context, url string, pid int) (RuntimeMem, Mem, error) {
	rt, err := FetchRuntimeMem(ctx, url)
	if err != nil {
		return rt, Mem{}, err
	}
	m, err := ReadMem(pid)
	return rt, m, err
}

func describeRefusal(r *Reply, err error) string {
	switch {
	case r != nil && r.Err != nil:
		return fmt.Sprintf("HTTP %d, JSON-RPC %d %q", r.Status, r.Err.Code, r.Err.Message)
	case err != nil:
		return err.Error()
	case r != nil:
		return fmt.Sprintf("HTTP %d without a session id", r.Status)
	}
	return "no answer"
}

// ExpiryResult is what happens to idle sessions once the bridge's
// --session-idle-timeout has passed.
type ExpiryResult struct {
	Sessions      int
	Timeout, Idle time.Duration // the bridge's idle timeout; how long the sessions then stayed idle
	// Before the sessions (after one warm-up session), with them all open,
	// and after Idle (before the probe request, so only the bridge's own
	// expiry can have freed them).
	RuntimeBefore, RuntimeLoaded, RuntimeAfter RuntimeMem
	Before, Loaded, After                      Mem
	// Status is the HTTP status of a ping on the first session after Idle
	// (404: the session is gone, as docs/MIGRATION.md says).
	Status int
}

// Released is whether the sessions' goroutines and live heap went back to
// within a tenth of what they added (plus a goroutine per hundred sessions
// for background noise).
func (r ExpiryResult) Released() bool {
	gAdded := r.RuntimeLoaded.Goroutines - r.RuntimeBefore.Goroutines
	gLeft := r.RuntimeAfter.Goroutines - r.RuntimeBefore.Goroutines
	hAdded := int64(r.RuntimeLoaded.HeapLive) - int64(r.RuntimeBefore.HeapLive)
	hLeft := int64(r.RuntimeAfter.HeapLive) - int64(r.RuntimeBefore.HeapLive)
	return gLeft <= max(gAdded/10, r.Sessions/100) && hLeft <= max(hAdded/10, 0)
}

// SessionExpiry opens n sessions on the bridge at url (process pid, run with
// an idle timeout of timeout), leaves them idle for idle, reads the
// process's memory, then pings the first session.
func SessionExpiry(ctx context.Context, url string, pid, n int, timeout, idle time.Duration) (ExpiryResult, error) {
	res := ExpiryResult{Sessions: n, Timeout: timeout, Idle: idle}
	hc := NewHTTPClient(1)
	defer hc.CloseIdleConnections()
	// Warm up first: the first session makes what the process keeps once
	// (the upstream's discovery cache and connection, the client's
	// connection, the sweeper), which is no session's memory to return.
	warm, r, err := Initialize(ctx, hc, url)
	if err != nil || warm == nil {
		return res, fmt.Errorf("session expiry: warm-up initialize: %s", describeRefusal(r, err))
	}
	if status, _, err := warm.Ping(ctx); status == 0 {
		return res, fmt.Errorf("session expiry: warm-up ping: %w", err)
	}
	if res.RuntimeBefore, res.Before, err = readMemory(ctx, url, pid); err != nil {
		return res, err
	}
	var first *Legacy
	for i := 0; i < n; i++ {
		l, r, err := Initialize(ctx, hc, url)
		if err != nil || l == nil {
			return res, fmt.Errorf("session expiry: initialize %d: %s", i, describeRefusal(r, err))
		}
		if first == nil {
			first = l
		}
	}
	if res.RuntimeLoaded, res.Loaded, err = readMemory(ctx, url, pid); err != nil {
		return res, err
	}
	select {
	case <-time.After(idle):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	if res.RuntimeAfter, res.After, err = readMemory(ctx, url, pid); err != nil {
		return res, err
	}
	// Any HTTP answer is a result (200 today, 404 as documented); only a
	// transport failure is an error.
	status, _, err := first.Ping(ctx)
	if status == 0 {
		return res, fmt.Errorf("session expiry: ping: %w", err)
	}
	res.Status = status
	return res, nil
}
