package bridgeload

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// ---- 7. many blocked tasks/result, one per task -------------------------

// StreamsResult is what a bridge process pays for many blocked
// tasks/result waits, each on a task of its own (so every wait has its own
// upstream task to follow), and how another principal's requests fare
// meanwhile.
type StreamsResult struct {
	Waits, Sessions int
	// Base: the bridge with the probe's session and task only. Idle: the
	// load's sessions and tasks created, no wait yet. Loaded: every wait
	// blocked (the largest RSS seen while they were). After: all answered.
	Base, Idle, Loaded, After Mem
	// RuntimeBase and Runtime: the bridge's own breakdown (after a GC).
	RuntimeBase, Runtime RuntimeMem
	// FDsBase and FDsLoaded: the bridge's open descriptors.
	FDsBase, FDsLoaded int
	// Upstream subscriptions/listen requests: open while loaded, the most
	// open at once during the run, and how many were opened in all.
	StreamsOpen, StreamsPeak, StreamsTotal int64
	// Probe: another principal's tasks/get of its own task and tools/call
	// (echo) round trips while every wait was blocked and the bridge had
	// taken them in (Settle). SettleGet and SettleCall: as many round trips
	// from the moment the last wait was seen blocked.
	ProbeGet, ProbeCall   Summary
	SettleGet, SettleCall Summary
	// Settle: from the last wait seen blocked until the first round of
	// probes had run and the bridge had fallen quiet (awaitQuiet); Settled
	// false: SettleTimeout passed first.
	Settle            time.Duration
	Settled           bool
	ProbeErrors       int
	ProbeFirstErr     error
	Blocked, Answered int
	Errors            int
	FirstErr          error
	Create, RampUp    time.Duration
	Drain             time.Duration
}

// PerWait is what one blocked wait (with its session share and its task)
// adds to the bridge: resident memory, goroutines and descriptors.
func (r StreamsResult) PerWait() (rss int64, goroutines, fds float64) {
	if r.Waits == 0 {
		return 0, 0, 0
	}
	n := float64(r.Waits)
	return (r.Loaded.RSS - r.Base.RSS) / int64(r.Waits),
		float64(r.Runtime.Goroutines-r.RuntimeBase.Goroutines) / n,
		float64(r.FDsLoaded-r.FDsBase) / n
}

// CountFDs is the number of open descriptors of pid (Linux only).
func CountFDs(pid int) (int, error) {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(es), err
}

// ProbeAuthorization is the probe's credential: a principal of its own,
// apart from the load's anonymous sessions.
const ProbeAuthorization = "Bearer bridgeload-probe"

// ManyTasks opens waits/perSession anonymous legacy sessions on the bridge
// at url (process pid, in front of up), creates one long task per wait,
// and parks one tasks/result call on every task, each on its own HTTP/1.1
// connection (at most rampConns in flight before being seen blocked). While
// all are blocked it samples pid's memory for hold and times probes
// sequential tasks/get and tools/call round trips of another principal
// (ProbeAuthorization, its own session and task), then calls loaded (if not
// nil; e.g. to save profiles), completes every task upstream and checks
// every answer.
func ManyTasks(ctx context.Context, up *Upstream, url string, pid, waits, perSession, rampConns int, hold time.Duration, probes int, loaded func() error) (StreamsResult, error) {
	nsess := (waits + perSession - 1) / perSession
	res := StreamsResult{Waits: waits, Sessions: nsess}
	hc := NewHTTPClient(waits + 64) // every blocked answer holds its own connection
	defer hc.CloseIdleConnections()
	phc := NewHTTPClient(4)
	defer phc.CloseIdleConnections()

	probe, err := DialLegacyAs(ctx, phc, url, ProbeAuthorization)
	if err != nil {
		return res, fmt.Errorf("probe session: %w", err)
	}
	probeTask, err := createTask(ctx, probe)
	if err != nil {
		return res, fmt.Errorf("probe task: %w", err)
	}
	probeGet, _ := json.Marshal(map[string]string{"taskId": probeTask})
	if res.RuntimeBase, res.Base, err = readMemory(ctx, url, pid); err != nil {
		return res, err
	}
	if res.FDsBase, err = CountFDs(pid); err != nil {
		return res, err
	}

	sessions := make([]*Legacy, nsess)
	for i := range sessions {
		if sessions[i], err = DialLegacy(ctx, hc, url); err != nil {
			return res, err
		}
	}
	start := time.Now()
	tasks := make([]string, waits)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				id, err := createTask(ctx, sessions[i/perSession])
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				tasks[i] = id
			}
		}()
	}
	for i := range tasks {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return res, err
	default:
	}
	res.Create = time.Since(start)
	if res.Idle, err = ReadMem(pid); err != nil {
		return res, err
	}

	up.ResetListenPeak()
	ws, blocked, rampUp, err := RampWaits(ctx, waits, rampConns, func(i int) (*Legacy, string) {
		return sessions[i/perSession], tasks[i]
	}, "many tasks")
	if err != nil {
		return res, err
	}
	res.RampUp, res.Blocked = rampUp, blocked

	// Hold: probes run back to back while the memory is sampled, in two
	// rounds. A wait seen blocked is not yet wholly taken in: its hub and
	// watcher still start (a store read, a stream registration, a record),
	// so right after a ramp of thousands the bridge is busy with that work
	// for a moment. The first round of probes times that moment (SettleGet,
	// SettleCall); then, once the bridge's CPU use has fallen quiet
	// (awaitQuiet), the second round times the waits held, the figure.
	pctx, stopProbes := context.WithCancel(ctx)
	var gets, calls, sgets, scalls []time.Duration
	var settleTook time.Duration
	var settledAll bool
	probed := make(chan struct{})
	blockedAt := time.Now()
	go func() {
		defer close(probed)
		echo := LegacyEcho(probe)
		round := func(gets, calls *[]time.Duration) {
			for i := 0; i < probes && pctx.Err() == nil; i++ {
				t0 := time.Now()
				r, err := probe.Call(pctx, "tasks/get", probeGet, Hooks{})
				if err == nil && r.Err != nil {
					err = r.Err
				}
				if err != nil {
					res.ProbeErrors++
					if res.ProbeFirstErr == nil {
						res.ProbeFirstErr = err
					}
				} else {
					*gets = append(*gets, time.Since(t0))
				}
				t0 = time.Now()
				if err := echo(pctx); err != nil {
					res.ProbeErrors++
					if res.ProbeFirstErr == nil {
						res.ProbeFirstErr = err
					}
				} else {
					*calls = append(*calls, time.Since(t0))
				}
			}
		}
		round(&sgets, &scalls)
		settledAll = awaitQuiet(pctx, pid, SettleTimeout)
		settleTook = time.Since(blockedAt)
		round(&gets, &calls)
	}()
	deadline := time.Now().Add(hold)
	for {
		m, err := ReadMem(pid)
		if err != nil {
			stopProbes()
			<-probed
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
			stopProbes()
			<-probed
			return res, ctx.Err()
		}
	}
	<-probed // the probes end by count; hold is their floor, not their bound
	stopProbes()
	res.Settle, res.Settled = settleTook, settledAll
	res.ProbeGet, res.ProbeCall = Summarize(gets), Summarize(calls)
	res.SettleGet, res.SettleCall = Summarize(sgets), Summarize(scalls)
	res.StreamsOpen, res.StreamsPeak, _ = up.Listens()
	if res.FDsLoaded, err = CountFDs(pid); err != nil {
		return res, err
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
	for _, id := range up.TaskIDs() {
		up.CompleteNow(id)
	}
	for _, w := range ws {
		select {
		case <-w.Done:
		case <-ctx.Done():
			return res, fmt.Errorf("many tasks: answers missing: %w", ctx.Err())
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
	_, _, res.StreamsTotal = up.Listens()
	if res.After, err = ReadMem(pid); err != nil {
		return res, err
	}
	return res, nil
}

// createTask makes a long task through l and returns its local id.
func createTask(ctx context.Context, l *Legacy) (string, error) {
	r, err := l.Call(ctx, "tools/call", longTaskParams, Hooks{})
	if err != nil {
		return "", fmt.Errorf("create task: %w", err)
	}
	if r.Err != nil {
		return "", fmt.Errorf("create task: %w", r.Err)
	}
	var res struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.Task.TaskID == "" || res.Task.Status != "working" {
		return "", fmt.Errorf("create task: not a working CreateTaskResult: %.200s", r.Result)
	}
	return res.Task.TaskID, nil
}

// SettleTimeout bounds how long ManyTasks waits for the bridge to fall
// quiet before its second round of probes runs anyway. Quiet: the bridge
// used at most SettleCPU of CPU time over SettleWindow (one tenth of a core:
// its keep-alive beat and nothing else).
const (
	SettleTimeout = 30 * time.Second
	SettleWindow  = 200 * time.Millisecond
	SettleCPU     = 20 * time.Millisecond
)

// awaitQuiet reports whether, before timeout, pid used at most SettleCPU of
// CPU time over a SettleWindow.
func awaitQuiet(ctx context.Context, pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	last, err := ReadCPU(pid)
	if err != nil {
		return false
	}
	for time.Now().Before(deadline) {
		select {
		case <-time.After(SettleWindow):
		case <-ctx.Done():
			return false
		}
		now, err := ReadCPU(pid)
		if err != nil {
			return false
		}
		if now-last <= SettleCPU {
			return true
		}
		last = now
	}
	return false
}
