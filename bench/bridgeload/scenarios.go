package bridgeload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// ---- 1. synchronous tools/call ------------------------------------------

// EchoLatency times perRound sequential calls per round on direct and
// bridged, alternating which goes first, after warmup calls on each.
func EchoLatency(ctx context.Context, direct, bridged Echo, warmup, rounds, perRound int) (d, b Summary, err error) {
	s, err := EchoLatencies(ctx, []Echo{direct, bridged}, warmup, rounds, perRound)
	if err != nil {
		return d, b, err
	}
	return s[0], s[1], nil
}

// EchoLatencies times perRound sequential calls per round on each path,
// rotating which goes first each round, after warmup calls on each.
func EchoLatencies(ctx context.Context, paths []Echo, warmup, rounds, perRound int) ([]Summary, error) {
	for i := 0; i < warmup; i++ {
		for p, e := range paths {
			if err := e(ctx); err != nil {
				return nil, fmt.Errorf("warm-up path %d: %w", p, err)
			}
		}
	}
	ds := make([][]time.Duration, len(paths))
	for r := 0; r < rounds; r++ {
		for k := range paths {
			p := (r + k) % len(paths)
			for i := 0; i < perRound; i++ {
				t0 := time.Now()
				if err := paths[p](ctx); err != nil {
					return nil, err
				}
				ds[p] = append(ds[p], time.Since(t0))
			}
		}
	}
	out := make([]Summary, len(paths))
	for p := range paths {
		out[p] = Summarize(ds[p])
	}
	return out, nil
}

// Throughput is the outcome of closed-loop load on one path.
type Throughput struct {
	Calls    int
	Errors   int
	Elapsed  time.Duration
	FirstErr error
	// CPU is the processor time the measured processes used meanwhile:
	// this process (clients and upstream) plus the path's proxy process, if
	// any. ProxyCPU is the proxy process's share alone.
	CPU, ProxyCPU time.Duration
}

// CPUPerCall is CPU over Calls.
func (t Throughput) CPUPerCall() time.Duration { return t.per(t.CPU) }

// ProxyCPUPerCall is the proxy process's CPU over Calls.
func (t Throughput) ProxyCPUPerCall() time.Duration { return t.per(t.ProxyCPU) }

// OwnCPUPerCall is this process's CPU (clients and upstream) over Calls.
func (t Throughput) OwnCPUPerCall() time.Duration { return t.per(t.CPU - t.ProxyCPU) }

func (t Throughput) per(d time.Duration) time.Duration {
	if t.Calls == 0 {
		return 0
	}
	return d / time.Duration(t.Calls)
}

// PerSecond is calls per second.
func (t Throughput) PerSecond() float64 {
	if t.Elapsed <= 0 {
		return 0
	}
	return float64(t.Calls) / t.Elapsed.Seconds()
}

// Path is one way of making the echo call under closed-loop load: its
// workers (one Echo each, all running concurrently) and, when the calls
// cross a proxy process (a bridge, or the bare reverse proxy of the cost
// floor), that process's id, whose CPU time is read around every window.
type Path struct {
	Workers []Echo
	Pid     int // 0: no proxy process (direct calls)
}

// CompareThroughput runs every path's workers in a closed loop for window,
// one path at a time, rounds times, rotating which path goes first so load
// drift hits all alike. All paths must have the same number of workers (the
// concurrency). CPU is read around each window, so CPU per call stays
// comparable on a machine shared with other work, where calls per second
// depend on how much CPU the run was given.
func CompareThroughput(ctx context.Context, paths []Path, rounds int, window time.Duration) ([]Throughput, error) {
	out := make([]Throughput, len(paths))
	if len(paths) == 0 || len(paths[0].Workers) == 0 {
		return out, errors.New("compare throughput: no paths or no workers")
	}
	for _, p := range paths {
		if len(p.Workers) != len(paths[0].Workers) {
			return out, errors.New("compare throughput: need the same number of workers on every path")
		}
	}
	cpu := func(pid int) (own, proxy time.Duration, err error) {
		if own, err = SelfCPU(); err != nil || pid == 0 {
			return own, 0, err
		}
		proxy, err = ReadCPU(pid)
		return own, proxy, err
	}
	for r := 0; r < rounds; r++ {
		for k := range paths {
			i := (r + k) % len(paths)
			if r%2 == 1 { // odd rounds run the rotation backwards
				i = (r + len(paths) - k) % len(paths)
			}
			own0, proxy0, err := cpu(paths[i].Pid)
			if err != nil {
				return out, err
			}
			closedLoop(ctx, paths[i].Workers, window, &out[i])
			own1, proxy1, err := cpu(paths[i].Pid)
			if err != nil {
				return out, err
			}
			out[i].CPU += own1 - own0 + proxy1 - proxy0
			out[i].ProxyCPU += proxy1 - proxy0
		}
	}
	return out, ctx.Err()
}

func closedLoop(ctx context.Context, es []Echo, window time.Duration, acc *Throughput) {
	var calls, errs atomic.Int64
	var firstErr atomic.Pointer[error]
	start := time.Now()
	deadline := start.Add(window)
	var wg sync.WaitGroup
	for _, e := range es {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if err := e(ctx); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, &err)
					continue
				}
				calls.Add(1)
			}
		}()
	}
	wg.Wait()
	acc.Elapsed += time.Since(start)
	acc.Calls += int(calls.Load())
	acc.Errors += int(errs.Load())
	if p := firstErr.Load(); p != nil && acc.FirstErr == nil {
		acc.FirstErr = *p
	}
}

// ---- 2. upstream tasks/get rate with many waiters ---------------------

// GetRateResult compares the upstream tasks/get traffic of two tasks that
// live side by side for the same time: one with a single blocked
// tasks/result, one with Waiters of them.
type GetRateResult struct {
	Waiters      int
	PollInterval time.Duration // the upstream's pollIntervalMs
	Life         time.Duration // creation of the first task to completion of both
	// Upstream tasks/get requests per task over its whole life.
	GetsOne, GetsMany int
	// The same, only while every waiter was blocked (Window long).
	Window                time.Duration
	WindowOne, WindowMany int
	Errors                int
	FirstErr              error
}

// Ratio is tasks/get of the busy task over the single-waiter task's.
func (r GetRateResult) Ratio() float64 { return ratio(r.GetsMany, r.GetsOne) }

// WindowRatio is Ratio over the steady window only.
func (r GetRateResult) WindowRatio() float64 { return ratio(r.WindowMany, r.WindowOne) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// GetRate creates two long tasks through the bridge at url (in front of up),
// parks one tasks/result on the first and waiters on the second, keeps them
// blocked for window, then completes both with demo.CompleteNow and checks
// every answer. up should have push disabled: with push the watcher does not
// poll at all and both counts are ~0.
func GetRate(ctx context.Context, up *Upstream, url string, waiters int, window time.Duration) (GetRateResult, error) {
	res := GetRateResult{Waiters: waiters, PollInterval: up.Options().PollInterval, Window: window}
	hc := NewHTTPClient(waiters + 4)
	defer hc.CloseIdleConnections()
	one, err := DialLegacy(ctx, hc, url)
	if err != nil {
		return res, err
	}
	many, err := DialLegacy(ctx, hc, url)
	if err != nil {
		return res, err
	}
	tr := NewTracker(up)
	start := time.Now()
	t1, err := tr.Create(ctx, one)
	if err != nil {
		return res, err
	}
	tN, err := tr.Create(ctx, many)
	if err != nil {
		return res, err
	}
	ws := []*Wait{StartWait(ctx, one, t1.Local)}
	for i := 0; i < waiters; i++ {
		ws = append(ws, StartWait(ctx, many, tN.Local))
	}
	for _, w := range ws {
		select {
		case <-w.Blocked:
		case <-ctx.Done():
			return res, fmt.Errorf("get rate: waiters not blocked: %w", ctx.Err())
		}
	}
	o0, m0 := up.GetCount(t1.Upstream), up.GetCount(tN.Upstream)
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	res.WindowOne, res.WindowMany = up.GetCount(t1.Upstream)-o0, up.GetCount(tN.Upstream)-m0
	up.CompleteNow(t1.Upstream)
	up.CompleteNow(tN.Upstream)
	res.Life = time.Since(start)
	for _, w := range ws {
		<-w.Done
		if w.Err != nil {
			res.Errors++
			if res.FirstErr == nil {
				res.FirstErr = w.Err
			}
		}
	}
	res.GetsOne, res.GetsMany = up.GetCount(t1.Upstream), up.GetCount(tN.Upstream)
	return res, nil
}

// ---- 3. many blocked tasks/result --------------------------------------

// WaitersResult is the memory of a bridge process holding many blocked
// tasks/result streams.
type WaitersResult struct {
	Waiters, Tasks int
	// Idle: sessions and tasks created, no waiter yet. Loaded: every waiter
	// blocked (the largest RSS seen while they were). After: all answered.
	Idle, Loaded, After Mem
	// Runtime is the bridge's own breakdown while loaded (after a GC).
	Runtime, RuntimeIdle RuntimeMem
	Blocked              int // waiters seen parked (keep-alive) before completion
	Answered             int // correct answers
	Errors               int
	FirstErr             error
	RampUp               time.Duration // first request to all blocked
	Drain                time.Duration // completion to the last answer
}

// PerWaiter is the resident memory one blocked waiter adds.
func (r WaitersResult) PerWaiter() int64 {
	if r.Waiters == 0 {
		return 0
	}
	return (r.Loaded.RSS - r.Idle.RSS) / int64(r.Waiters)
}

// ManyWaiters opens tasks legacy sessions on the bridge at url (process pid,
// in front of up), creates one long task in each, and parks perTask tasks/result
// calls on every task, each on its own HTTP/1.1 connection (a blocked SSE
// answer holds its connection). At most rampConns requests are in flight
// before being seen blocked, so the bridge's accept queue is never flooded.
// It samples pid's memory while all are blocked for hold, calls loaded (if
// not nil; e.g. to save profiles), then completes every task and checks every
// answer.
func ManyWaiters(ctx context.Context, up *Upstream, url string, pid int, tasks, perTask, rampConns int, hold time.Duration, loaded func() error) (WaitersResult, error) {
	n := tasks * perTask
	res := WaitersResult{Waiters: n, Tasks: tasks}
	hc := NewHTTPClient(n) // every blocked answer holds its own connection
	defer hc.CloseIdleConnections()

	track := NewTracker(up)
	sessions := make([]*Legacy, tasks)
	ts := make([]Task, tasks)
	for i := range sessions {
		l, err := DialLegacy(ctx, hc, url)
		if err != nil {
			return res, err
		}
		t, err := track.Create(ctx, l)
		if err != nil {
			return res, err
		}
		sessions[i], ts[i] = l, t
	}
	var err error
	if res.RuntimeIdle, res.Idle, err = readMemory(ctx, url, pid); err != nil {
		return res, err
	}

	// Wait k is on task k % tasks: every task gets its first waiter before any
	// gets its second.
	ws, blocked, rampUp, err := RampWaits(ctx, n, rampConns, func(k int) (*Legacy, string) {
		return sessions[k%tasks], ts[k%tasks].Local
	}, "many waiters")
	if err != nil {
		return res, err
	}
	res.RampUp, res.Blocked = rampUp, blocked
	// Hold the load and sample the resident memory (keep-alives keep
	// flowing; RSS settles once the GC has run under the new heap).
	deadline := time.Now().Add(hold)
	for {
		m, err := ReadMem(pid)
		if err != nil {
			return res, err
		}
		res.Loaded.RSS = max(res.Loaded.RSS, m.RSS)
		res.Loaded.HWM = m.HWM
		if !time.Now().Before(deadline) {
			break
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}

	// The runtime's breakdown last: its forced GC would lower RSS samples.
	if res.Runtime, err = FetchRuntimeMem(ctx, url); err != nil {
		return res, err
	}
	if loaded != nil {
		if err := loaded(); err != nil {
			return res, err
		}
	}
	done := time.Now()
	for _, t := range ts {
		up.CompleteNow(t.Upstream)
	}
	for _, w := range ws {
		select {
		case <-w.Done:
		case <-ctx.Done():
			return res, fmt.Errorf("many waiters: answers missing: %w", ctx.Err())
		}
		if w.Err != nil {
			res.Errors++
			if res.FirstErr == nil {
				res.FirstErr = w.Err
			}
			continue
		}
		res.Answered++
	}
	res.Drain = time.Since(done)
	if res.After, err = ReadMem(pid); err != nil {
		return res, err
	}
	return res, nil
}

// ---- 4. completion → tasks/result answer delay --------------------------

// DelayResult is the time from the upstream completing a task to the
// legacy client reading its tasks/result answer.
type DelayResult struct {
	Push         bool
	PollInterval time.Duration
	Delays       Summary
	// Poll path only: Delays split at the first upstream tasks/get after the
	// completion: Cadence is the wait for that poll (the watcher's schedule),
	// Processing the rest (the get's round trip, the durable write of the
	// terminal snapshot, the store reads and the answer to the client).
	Cadence, Processing Summary
	Errors              int
	FirstErr            error
}

// ResultDelay measures samples completions, one task at a time: create a
// long task, park a tasks/result on it, make sure it is blocked in the bridge
// (a keep-alive arrived) and, with push, that the bridge's watcher holds an
// acknowledged subscriptions/listen upstream; then demo.CompleteNow and time
// the answer. Without push the completion instant is spread uniformly over a
// poll interval, since it falls at a random point of the watcher's cycle.
func ResultDelay(ctx context.Context, up *Upstream, url string, samples int) (DelayResult, error) {
	push := !up.Options().DisablePush
	res := DelayResult{Push: push, PollInterval: up.Options().PollInterval}
	hc := NewHTTPClient(4)
	defer hc.CloseIdleConnections()
	l, err := DialLegacy(ctx, hc, url)
	if err != nil {
		return res, err
	}
	tr := NewTracker(up)
	var delays, cadence, processing []time.Duration
	for i := 0; i < samples; i++ {
		listens := up.Counters().ListenStreams
		t, err := tr.Create(ctx, l)
		if err != nil {
			return res, err
		}
		w := StartWait(ctx, l, t.Local)
		select {
		case <-w.Blocked:
		case <-ctx.Done():
			return res, fmt.Errorf("result delay: waiter not blocked: %w", ctx.Err())
		}
		if push {
			if err := until(ctx, func() bool { return up.Counters().ListenStreams > listens }); err != nil {
				return res, fmt.Errorf("result delay: no upstream listen: %w", err)
			}
		} else {
			select {
			case <-time.After(rand.N(res.PollInterval)):
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		t0 := time.Now()
		if !up.CompleteNow(t.Upstream) {
			return res, errors.New("result delay: CompleteNow found no pending end")
		}
		select {
		case <-w.Done:
		case <-ctx.Done():
			return res, fmt.Errorf("result delay: no answer: %w", ctx.Err())
		}
		if w.Err != nil {
			res.Errors++
			if res.FirstErr == nil {
				res.FirstErr = w.Err
			}
			continue
		}
		delays = append(delays, w.At.Sub(t0))
		if get := up.GetAfter(t.Upstream, t0); !push && !get.IsZero() && get.Before(w.At) {
			cadence = append(cadence, get.Sub(t0))
			processing = append(processing, w.At.Sub(get))
		}
	}
	res.Delays, res.Cadence, res.Processing = Summarize(delays), Summarize(cadence), Summarize(processing)
	return res, nil
}

// until re-checks cond (cheap, in memory) every millisecond.
func until(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
