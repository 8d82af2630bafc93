// Command bridgeload is the load tool of the bridge's legacy face (issue 4,
// "Benchmarks"). In one bounded run it measures, each against its baseline
// from the same run:
//
//  1. echo: synchronous tools/call throughput and latency through a bridge
//     process ÷ the same calls made directly to the same upstream;
//  2. getrate: upstream tasks/get for a task with 100 blocked tasks/result
//     waiters ÷ for a task with one waiter;
//  3. waiters: resident memory of a bridge process holding 10,000 blocked
//     tasks/result streams, and that every one is answered;
//  4. delay: upstream completion → legacy tasks/result answer, push and poll.
//
// The modern upstream (internal/demo) runs in this process so the tool can
// complete tasks at a precise instant and read per-task counters; the bridge
// runs as a child process (this binary in its bridge-child mode) so its
// memory is its own. Everything listens on 127.0.0.1. The tool prints a
// Markdown table and exits; -timeout bounds the whole run.
//
// Usage: go run ./bench/cmd/bridgeload [-phases echo,delay,getrate,waiters] [flags]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/tasksbridge/tasksbridge/bench/bridgeload"
	"github.com/tasksbridge/tasksbridge/internal/demo"
)

type config struct {
	phases  map[string]bool
	timeout time.Duration

	echoConc   int
	echoRounds int
	echoWindow time.Duration
	latRounds  int
	latPer     int

	getWaiters int
	getWindow  time.Duration
	getPoll    time.Duration

	waiters     int
	waiterTasks int
	ramp        int
	hold        time.Duration

	pushSamples int
	pollSamples int
	delayPoll   time.Duration

	profileDir string
	memLimit   string
	memStore   bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == bridgeload.ChildMode {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := bridgeload.RunChild(ctx, os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bridgeload bridge-child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bridgeload:", err)
		os.Exit(1)
	}
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("bridgeload", flag.ContinueOnError)
	phases := fs.String("phases", "echo,delay,getrate,waiters", "comma-separated phases to run (always in this order)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "bound on the whole run")
	fs.IntVar(&c.echoConc, "echo-conc", 8, "echo: concurrent workers on each path (throughput)")
	fs.IntVar(&c.echoRounds, "echo-rounds", 4, "echo: throughput rounds per path (alternating order)")
	fs.DurationVar(&c.echoWindow, "echo-window", 2*time.Second, "echo: length of one throughput round")
	fs.IntVar(&c.latRounds, "lat-rounds", 6, "echo: latency rounds per path (alternating order)")
	fs.IntVar(&c.latPer, "lat-per", 300, "echo: sequential calls per latency round")
	fs.IntVar(&c.getWaiters, "get-waiters", 100, "getrate: waiters on the busy task")
	fs.DurationVar(&c.getWindow, "get-window", 10*time.Second, "getrate: how long all waiters stay blocked")
	fs.DurationVar(&c.getPoll, "get-poll", 100*time.Millisecond, "getrate: upstream pollIntervalMs (push off)")
	fs.IntVar(&c.waiters, "waiters", 10000, "waiters: blocked tasks/result calls in total")
	fs.IntVar(&c.waiterTasks, "waiter-tasks", 100, "waiters: tasks (one legacy session each) sharing them")
	fs.IntVar(&c.ramp, "ramp", 1024, "waiters: requests in flight before being seen blocked")
	fs.DurationVar(&c.hold, "hold", 6*time.Second, "waiters: how long to hold them all and sample memory")
	fs.IntVar(&c.pushSamples, "push-samples", 200, "delay: samples on the push path")
	fs.IntVar(&c.pollSamples, "poll-samples", 60, "delay: samples on the poll path")
	fs.DurationVar(&c.delayPoll, "delay-poll", 200*time.Millisecond, "delay: upstream pollIntervalMs on the poll path")
	fs.BoolVar(&c.memStore, "memory-store", false, "run the bridge on the in-memory store instead of Badger (diagnosis: removes fsync latency)")
	fs.StringVar(&c.memLimit, "bridge-gomemlimit", "", "waiters: GOMEMLIMIT of the bridge process (e.g. 200MiB; default none)")
	fs.StringVar(&c.profileDir, "profile-dir", "", "waiters: save the loaded bridge's heap and goroutine profiles here")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.phases = map[string]bool{}
	for _, p := range strings.Split(*phases, ",") {
		switch p = strings.TrimSpace(p); p {
		case "echo", "getrate", "waiters", "delay":
			c.phases[p] = true
		case "":
		default:
			return c, fmt.Errorf("unknown phase %q (echo, getrate, waiters, delay)", p)
		}
	}
	if c.waiterTasks <= 0 || c.waiters < c.waiterTasks || c.waiters%c.waiterTasks != 0 {
		return c, fmt.Errorf("-waiters (%d) must be a positive multiple of -waiter-tasks (%d)", c.waiters, c.waiterTasks)
	}
	if c.echoConc <= 0 || c.getWaiters <= 0 || c.ramp <= 0 {
		return c, errors.New("-echo-conc, -get-waiters and -ramp must be positive")
	}
	return c, nil
}

func run(args []string, out io.Writer) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	// Both this process (clients + upstream) and the child bridge hold one
	// descriptor per blocked waiter, plus the store's files.
	fdNote, fdCur, err := bridgeload.RaiseNoFile(uint64(c.waiters) + 4096)
	if err != nil {
		return err
	}
	rep := &report{out: out}
	store := "Badger in a temporary directory (SyncWrites, as deployed)"
	if c.memStore {
		store = "in-memory (diagnostic run: no fsync)"
	}
	rep.machine(fdNote + ", bridge store " + store)
	if c.phases["waiters"] && fdCur < uint64(c.waiters)+1024 {
		rep.note("open-file limit %d is too low for %d waiters; reduce -waiters", fdCur, c.waiters)
		return fmt.Errorf("open-file limit %d too low for -waiters %d", fdCur, c.waiters)
	}

	// The 10,000-waiter phase goes last: it leaves this process with a large
	// heap that would add GC work to the latency-sensitive phases.
	for _, ph := range []struct {
		name string
		run  func(context.Context, config, string, *report) error
	}{{"echo", phaseEcho}, {"delay", phaseDelay}, {"getrate", phaseGetRate}, {"waiters", phaseWaiters}} {
		if !c.phases[ph.name] {
			continue
		}
		runtime.GC()
		if err := ph.run(ctx, c, exe, rep); err != nil {
			return fmt.Errorf("%s: %w", ph.name, err)
		}
	}
	rep.finish()
	return nil
}

// withBridge runs f against an upstream (opts) and a child bridge process in
// front of it.
func withBridge(ctx context.Context, c config, exe string, opts demo.Options, keepAlive time.Duration, env []string,
	f func(up *bridgeload.Upstream, p *bridgeload.Proc) error) error {
	up, err := bridgeload.StartUpstream(ctx, opts)
	if err != nil {
		return err
	}
	defer up.Close()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args := []string{bridgeload.ChildMode, "-upstream", up.URL, "-keepalive", keepAlive.String()}
	if c.memStore {
		args = append(args, "-memory")
	}
	p, err := bridgeload.StartProc(sctx, exe, env, args...)
	if err != nil {
		return err
	}
	ferr := f(up, p)
	serr := p.Stop(15 * time.Second)
	return errors.Join(ferr, serr)
}

func phaseEcho(ctx context.Context, c config, exe string, rep *report) error {
	return withBridge(ctx, c, exe, demo.Options{}, 0, nil, func(up *bridgeload.Upstream, p *bridgeload.Proc) error {
		// One HTTP client configuration, one connection per worker, on both paths.
		dhc, bhc := bridgeload.NewHTTPClient(c.echoConc), bridgeload.NewHTTPClient(c.echoConc)
		defer dhc.CloseIdleConnections()
		defer bhc.CloseIdleConnections()
		m := bridgeload.NewModern(dhc, up.URL)
		var direct, bridged []bridgeload.Echo
		for i := 0; i < c.echoConc; i++ {
			l, err := bridgeload.DialLegacy(ctx, bhc, p.URL)
			if err != nil {
				return err
			}
			direct = append(direct, bridgeload.ModernEcho(m))
			bridged = append(bridged, bridgeload.LegacyEcho(l))
		}
		dl, bl, err := bridgeload.EchoLatency(ctx, direct[0], bridged[0], 200, c.latRounds, c.latPer)
		if err != nil {
			return err
		}
		// CPU of everything taking part: this process (clients and
		// upstream) and the bridge process.
		cpu := func() (time.Duration, error) {
			self, err := bridgeload.SelfCPU()
			if err != nil {
				return 0, err
			}
			child, err := bridgeload.ReadCPU(p.Pid())
			return self + child, err
		}
		child0, err := bridgeload.ReadCPU(p.Pid())
		if err != nil {
			return err
		}
		dt, bt, err := bridgeload.EchoThroughput(ctx, direct, bridged, c.echoRounds, c.echoWindow, cpu)
		if err != nil {
			return err
		}
		// The bridge idles through the direct windows: its CPU is the
		// bridged calls' own cost.
		child1, err := bridgeload.ReadCPU(p.Pid())
		if err != nil {
			return err
		}
		if dt.Errors+bt.Errors > 0 {
			return fmt.Errorf("%d direct and %d bridged echo errors (first: %v, %v)", dt.Errors, bt.Errors, dt.FirstErr, bt.FirstErr)
		}
		rep.echo(c, dl, bl, dt, bt, child1-child0)
		return nil
	})
}

func phaseGetRate(ctx context.Context, c config, exe string, rep *report) error {
	opts := demo.Options{PollInterval: c.getPoll, DisablePush: true}
	return withBridge(ctx, c, exe, opts, 100*time.Millisecond, nil, func(up *bridgeload.Upstream, p *bridgeload.Proc) error {
		r, err := bridgeload.GetRate(ctx, up, p.URL, c.getWaiters, c.getWindow)
		if err != nil {
			return err
		}
		rep.getRate(r)
		return nil
	})
}

func phaseWaiters(ctx context.Context, c config, exe string, rep *report) error {
	var env []string
	if c.memLimit != "" {
		env = append(env, "GOMEMLIMIT="+c.memLimit)
	}
	return withBridge(ctx, c, exe, demo.Options{}, 2*time.Second, env, func(up *bridgeload.Upstream, p *bridgeload.Proc) error {
		base, err := bridgeload.ReadMem(p.Pid())
		if err != nil {
			return err
		}
		var loaded func() error
		if c.profileDir != "" {
			loaded = func() error {
				for _, name := range []string{"heap", "goroutine"} {
					if err := bridgeload.SaveProfile(ctx, p.URL, name, filepath.Join(c.profileDir, "bridge-"+name+".pprof")); err != nil {
						return err
					}
				}
				return nil
			}
		}
		r, err := bridgeload.ManyWaiters(ctx, up, p.URL, p.Pid(), c.waiterTasks, c.waiters/c.waiterTasks, c.ramp, c.hold, loaded)
		if err != nil {
			return err
		}
		rep.waiters(base, r)
		return nil
	})
}

func phaseDelay(ctx context.Context, c config, exe string, rep *report) error {
	var push, poll bridgeload.DelayResult
	err := withBridge(ctx, c, exe, demo.Options{}, 10*time.Millisecond, nil, func(up *bridgeload.Upstream, p *bridgeload.Proc) error {
		var err error
		push, err = bridgeload.ResultDelay(ctx, up, p.URL, c.pushSamples)
		return err
	})
	if err != nil {
		return err
	}
	err = withBridge(ctx, c, exe, demo.Options{PollInterval: c.delayPoll, DisablePush: true}, 10*time.Millisecond, nil,
		func(up *bridgeload.Upstream, p *bridgeload.Proc) error {
			var err error
			poll, err = bridgeload.ResultDelay(ctx, up, p.URL, c.pollSamples)
			return err
		})
	if err != nil {
		return err
	}
	rep.delay(push, poll)
	return nil
}

// ---- report -------------------------------------------------------------

type row struct{ figure, bridge, baseline, value, goal, met string }

type report struct {
	out   io.Writer
	rows  []row
	notes []string
}

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func (r *report) machine(fdNote string) {
	fmt.Fprintf(r.out, "machine: %d CPUs (%s), %s RAM, %s, GOMAXPROCS %d, load average %s, %s\n",
		runtime.NumCPU(), cpuModel(), memTotal(), runtime.Version(), runtime.GOMAXPROCS(0), loadAvg(), fdNote)
}

func (r *report) echo(c config, dl, bl bridgeload.Summary, dt, bt bridgeload.Throughput, bridgeCPU time.Duration) {
	ratio := bt.PerSecond() / dt.PerSecond()
	added := bl.P50 - dl.P50
	r.rows = append(r.rows,
		row{fmt.Sprintf("1a sync tools/call throughput, %d workers", c.echoConc),
			fmt.Sprintf("%.0f calls/s", bt.PerSecond()), fmt.Sprintf("%.0f calls/s direct", dt.PerSecond()),
			fmt.Sprintf("ratio %.2f", ratio), "≥ 0.8", met(ratio >= 0.8)},
		row{"1b sync tools/call added p50 latency, 1 worker",
			fmt.Sprintf("p50 %s (p99 %s)", bridgeload.Ms(bl.P50), bridgeload.Ms(bl.P99)),
			fmt.Sprintf("p50 %s (p99 %s) direct", bridgeload.Ms(dl.P50), bridgeload.Ms(dl.P99)),
			"+" + bridgeload.Ms(added), "≤ 0.25 ms", met(added <= 250*time.Microsecond)})
	cpuRatio := float64(dt.CPUPerCall()) / float64(bt.CPUPerCall())
	r.rows = append(r.rows, row{"1c sync tools/call CPU per call (all processes)",
		fmt.Sprintf("%s CPU/call, of which the bridge process %s", bridgeload.Ms(bt.CPUPerCall()), bridgeload.Ms(bridgeCPU/time.Duration(max(bt.Calls, 1)))),
		fmt.Sprintf("%s CPU/call direct (client + upstream)", bridgeload.Ms(dt.CPUPerCall())),
		fmt.Sprintf("direct ÷ bridge %.2f", cpuRatio), "(context for 1a)", "—"})
	r.note("echo: %d+%d calls timed for latency, %d direct and %d bridged calls for throughput over %s per path; "+
		"CPU used %s direct, %s bridged (both processes); the CPU ratio is the throughput ratio a dedicated, CPU-bound machine would show",
		dl.N, bl.N, dt.Calls, bt.Calls, dt.Elapsed.Round(time.Millisecond), dt.CPU.Round(time.Millisecond), bt.CPU.Round(time.Millisecond))
}

func (r *report) getRate(g bridgeload.GetRateResult) {
	r.rows = append(r.rows, row{
		fmt.Sprintf("2 upstream tasks/get, %d waiters ÷ 1 waiter (poll %s, push off)", g.Waiters, g.PollInterval),
		fmt.Sprintf("%d gets", g.GetsMany), fmt.Sprintf("%d gets (1 waiter)", g.GetsOne),
		fmt.Sprintf("ratio %.2f (blocked window %.2f)", g.Ratio(), g.WindowRatio()), "≤ 1.1",
		met(g.Ratio() <= 1.1 && g.Errors == 0)})
	r.note("getrate: both tasks lived %s side by side; while all were blocked (%s): %d vs %d gets; %d answer errors%s",
		g.Life.Round(time.Millisecond), g.Window, g.WindowMany, g.WindowOne, g.Errors, firstErr(g.FirstErr))
}

func (r *report) waiters(base bridgeload.Mem, w bridgeload.WaitersResult) {
	ok := w.Loaded.HWM <= 256<<20 && w.Errors == 0 && w.Answered == w.Waiters && w.Blocked == w.Waiters
	r.rows = append(r.rows, row{
		fmt.Sprintf("3 bridge RSS with %d blocked tasks/result (%d tasks × %d)", w.Waiters, w.Tasks, w.Waiters/w.Tasks),
		fmt.Sprintf("RSS %s, peak %s", bridgeload.MiB(w.Loaded.RSS), bridgeload.MiB(w.Loaded.HWM)),
		fmt.Sprintf("%s idle (sessions+tasks), %s at start", bridgeload.MiB(w.Idle.RSS), bridgeload.MiB(base.RSS)),
		fmt.Sprintf("%.1f KiB/waiter; %d errors", float64(w.PerWaiter())/1024, w.Errors), "≤ 256 MB, 0 errors", met(ok)})
	per := func(a, b uint64) float64 { return float64(int64(a)-int64(b)) / float64(w.Waiters) / 1024 }
	r.note("waiters: bridge runtime per waiter (after a GC): %.1f goroutines, stacks %.1f KiB, heap in use %.1f KiB (live %.1f KiB); runtime Sys %s loaded",
		float64(w.Runtime.Goroutines-w.RuntimeIdle.Goroutines)/float64(w.Waiters),
		per(w.Runtime.StackInuse, w.RuntimeIdle.StackInuse), per(w.Runtime.HeapInuse, w.RuntimeIdle.HeapInuse),
		per(w.Runtime.HeapLive, w.RuntimeIdle.HeapLive), bridgeload.MiB(int64(w.Runtime.Sys)))
	r.note("waiters: %d blocked, %d answered correctly, %d errors%s; ramp-up %s, drain %s; RSS after answers %s",
		w.Blocked, w.Answered, w.Errors, firstErr(w.FirstErr), w.RampUp.Round(time.Millisecond),
		w.Drain.Round(time.Millisecond), bridgeload.MiB(w.After.RSS))
}

func (r *report) delay(push, poll bridgeload.DelayResult) {
	r.rows = append(r.rows,
		row{"4a completion → tasks/result answer, push", fmt.Sprintf("p50 %s, p99 %s, max %s",
			bridgeload.Ms(push.Delays.P50), bridgeload.Ms(push.Delays.P99), bridgeload.Ms(push.Delays.Max)),
			"—", fmt.Sprintf("p99 %s (n=%d)", bridgeload.Ms(push.Delays.P99), push.Delays.N), "p99 ≤ 20 ms",
			met(push.Delays.P99 <= 20*time.Millisecond && push.Errors == 0)},
		row{fmt.Sprintf("4b completion → tasks/result answer, poll (interval %s)", poll.PollInterval),
			fmt.Sprintf("p50 %s, p99 %s, max %s", bridgeload.Ms(poll.Delays.P50), bridgeload.Ms(poll.Delays.P99), bridgeload.Ms(poll.Delays.Max)),
			"—", fmt.Sprintf("p99 = %.2f intervals (n=%d)", float64(poll.Delays.P99)/float64(poll.PollInterval), poll.Delays.N),
			"≤ 1 interval", met(poll.Delays.P99 <= poll.PollInterval && poll.Errors == 0)})
	r.note("delay: poll split at the first upstream tasks/get after the completion: waiting for that poll %s; "+
		"from that poll to the answer %s", poll.Cadence, poll.Processing)
	r.note("delay: push %s; poll %s; errors %d/%d%s", push.Delays, poll.Delays, push.Errors, poll.Errors,
		firstErr(errors.Join(push.FirstErr, poll.FirstErr)))
}

func firstErr(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf(" (first: %v)", err)
}

func (r *report) finish() {
	// Rows in issue order (figure numbers), whatever order the phases ran in.
	sort.SliceStable(r.rows, func(i, j int) bool { return r.rows[i].figure < r.rows[j].figure })
	fmt.Fprintf(r.out, "\n| figure | bridge | baseline | result | goal | met |\n|---|---|---|---|---|---|\n")
	for _, x := range r.rows {
		fmt.Fprintf(r.out, "| %s | %s | %s | %s | %s | %s |\n", x.figure, x.bridge, x.baseline, x.value, x.goal, x.met)
	}
	fmt.Fprintln(r.out)
	for _, n := range r.notes {
		fmt.Fprintf(r.out, "- %s\n", n)
	}
	fmt.Fprintf(r.out, "- load average at the end: %s\n", loadAvg())
}

// ---- machine facts ------------------------------------------------------

func firstLine(path, prefix string) string {
	f, err := os.Open(path)
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			_, v, _ := strings.Cut(sc.Text(), ":")
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func cpuModel() string { return firstLine("/proc/cpuinfo", "model name") }
func memTotal() string { return firstLine("/proc/meminfo", "MemTotal") }

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
