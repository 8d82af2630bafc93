// Command bridgeload is the bridge's load tool. In one bounded run it
// measures, each against its baseline from the same run:
//
//   - echo: synchronous tools/call throughput, latency and CPU per call
//     through the bridge's legacy face (legacy client → modern upstream) ÷
//     the same calls made directly, and ÷ a bare httputil.ReverseProxy in
//     front of the same upstream (the cost floor);
//   - passthrough: the same for a modern client through the bridge to a
//     modern upstream (same-era passthrough);
//   - modernface: the same for a modern client through the bridge to a
//     legacy upstream (the in-repo legacy fixture);
//   - delay: upstream completion → legacy tasks/result answer, push and poll;
//   - getrate: upstream tasks/get for a task with 100 blocked tasks/result
//     waiters ÷ for a task with one waiter;
//   - store: durable task creates with 8 concurrent writers ÷ one writer;
//   - sessions: memory and goroutines of 20,000 idle legacy sessions, and
//     whether sessions idle past --session-idle-timeout are gone;
//   - waiters: resident memory of a bridge process holding 10,000 blocked
//     tasks/result streams, and that every one is answered;
//   - streams (opt-in: -phases streams; about a minute): 10,000 blocked
//     tasks/result waits on 10,000 distinct tasks: the bridge's RSS,
//     goroutines and descriptors per wait, the subscriptions/listen
//     streams it holds upstream, and another principal's tasks/get and
//     tools/call round trips meanwhile.
//
// The upstreams (internal/demo, internal/testkit/legacyfixture) run in this process
// so the tool can complete tasks at a precise instant and read per-task
// counters; the bridge (router, as `bridge serve` runs it) and the
// reverse proxy run as child processes (this binary in its bridge-child
// mode) so their memory and CPU time are their own. Everything listens on
// 127.0.0.1. The tool prints a Markdown table and exits; -timeout bounds the
// whole run.
//
// Usage: go run ./bench/cmd/bridgeload [-phases echo,passthrough,...] [flags]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
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

	streamWaits      int
	streamPerSession int
	streamHold       time.Duration
	streamProbes     int

	pushSamples int
	pollSamples int
	delayPoll   time.Duration

	sessions       int
	expirySessions int
	expiryTimeout  time.Duration
	expiryIdle     time.Duration

	storeWriters int
	storePer     int

	profileDir string
	cpuProfile string
	idleConns  int
	memLimit   string
	memStore   bool
}

// phaseOrder is the order phases run in, whatever order -phases names them.
// The 10,000-waiter phase goes last: it leaves this process with a large
// heap that would add GC work to the latency-sensitive phases.
var phaseOrder = []string{"echo", "passthrough", "modernface", "delay", "getrate", "store", "sessions", "waiters", "streams"}

// defaultPhases run without -phases: all but streams, which takes about a
// minute of 10,000 task creations and is run on its own (-phases streams).
var defaultPhases = slices.DeleteFunc(slices.Clone(phaseOrder), func(p string) bool { return p == "streams" })

func main() {
	if len(os.Args) > 1 && os.Args[1] == bridgeload.ChildMode {
		childMain(os.Args[2:])
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bridgeload:", err)
		os.Exit(1)
	}
}

// childMain is the process under test (a bridge or the bare reverse proxy).
func childMain(args []string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bridgeload.RunChild(ctx, args, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bridgeload bridge-child:", err)
		os.Exit(1)
	}
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("bridgeload", flag.ContinueOnError)
	phases := fs.String("phases", strings.Join(defaultPhases, ","), "comma-separated phases to run (always in the order "+strings.Join(phaseOrder, ",")+"; streams is opt-in)")
	fs.DurationVar(&c.timeout, "timeout", 20*time.Minute, "bound on the whole run")
	fs.IntVar(&c.echoConc, "echo-conc", 8, "echo, passthrough, modernface: concurrent workers on each path (throughput)")
	fs.IntVar(&c.echoRounds, "echo-rounds", 4, "echo, passthrough, modernface: throughput rounds per path (rotating order)")
	fs.DurationVar(&c.echoWindow, "echo-window", 2*time.Second, "echo, passthrough, modernface: length of one throughput round")
	fs.IntVar(&c.latRounds, "lat-rounds", 6, "echo: latency rounds per path (alternating order)")
	fs.IntVar(&c.latPer, "lat-per", 300, "echo: sequential calls per latency round")
	fs.IntVar(&c.getWaiters, "get-waiters", 100, "getrate: waiters on the busy task")
	fs.DurationVar(&c.getWindow, "get-window", 10*time.Second, "getrate: how long all waiters stay blocked")
	fs.DurationVar(&c.getPoll, "get-poll", 100*time.Millisecond, "getrate: upstream pollIntervalMs (push off)")
	fs.IntVar(&c.waiters, "waiters", 10000, "waiters: blocked tasks/result calls in total")
	fs.IntVar(&c.waiterTasks, "waiter-tasks", 100, "waiters: tasks (one legacy session each) sharing them")
	fs.IntVar(&c.ramp, "ramp", 1024, "waiters: requests in flight before being seen blocked")
	fs.DurationVar(&c.hold, "hold", 6*time.Second, "waiters: how long to hold them all and sample memory")
	fs.IntVar(&c.streamWaits, "stream-waits", 10000, "streams: blocked tasks/result waits, each on a task of its own")
	fs.IntVar(&c.streamPerSession, "stream-per-session", 100, "streams: waits (and tasks) per legacy session")
	fs.DurationVar(&c.streamHold, "stream-hold", 6*time.Second, "streams: how long at least to hold them all and sample memory")
	fs.IntVar(&c.streamProbes, "stream-probes", 200, "streams: another principal's tasks/get + tools/call round trips in each of two rounds while all are blocked (right after the ramp; once the bridge has taken the waits in: figure 14)")
	fs.IntVar(&c.pushSamples, "push-samples", 200, "delay: samples on the push path")
	fs.IntVar(&c.pollSamples, "poll-samples", 60, "delay: samples on the poll path")
	fs.DurationVar(&c.delayPoll, "delay-poll", 200*time.Millisecond, "delay: upstream pollIntervalMs on the poll path")
	fs.IntVar(&c.sessions, "sessions", 20000, "sessions: idle legacy sessions opened by sequential initialize")
	fs.IntVar(&c.expirySessions, "expiry-sessions", 1000, "sessions: sessions left idle past the idle timeout")
	fs.DurationVar(&c.expiryTimeout, "expiry-timeout", 2*time.Second, "sessions: the bridge's --session-idle-timeout for the expiry check")
	fs.DurationVar(&c.expiryIdle, "expiry-idle", 5*time.Second, "sessions: how long the sessions stay idle before the check")
	fs.IntVar(&c.storeWriters, "store-writers", 8, "store: concurrent durable creators")
	fs.IntVar(&c.storePer, "store-per", 100, "store: creates per writer")
	fs.BoolVar(&c.memStore, "memory-store", false, "run the bridge on the in-memory store instead of Badger (diagnosis: removes fsync latency)")
	fs.StringVar(&c.memLimit, "bridge-gomemlimit", "", "waiters, sessions (the flood): GOMEMLIMIT of the bridge process (e.g. 200MiB; default none)")
	fs.StringVar(&c.profileDir, "profile-dir", "", "waiters, sessions: save the loaded bridge's heap (and goroutine) profiles here")
	fs.IntVar(&c.idleConns, "bridge-upstream-idle-conns", 0, "keep-alive connections per upstream host in the bridge (diagnosis; 0: as deployed, the bridge's own pool)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "directory: every bridge and reverse-proxy child writes its CPU profile there (bridge-PHASE.pprof, revproxy-PHASE.pprof)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.phases = map[string]bool{}
	for _, p := range strings.Split(*phases, ",") {
		p = strings.TrimSpace(p)
		switch {
		case slices.Contains(phaseOrder, p):
			c.phases[p] = true
		case p == "":
		default:
			return c, fmt.Errorf("unknown phase %q (%s)", p, strings.Join(phaseOrder, ", "))
		}
	}
	if c.waiterTasks <= 0 || c.waiters < c.waiterTasks || c.waiters%c.waiterTasks != 0 {
		return c, fmt.Errorf("-waiters (%d) must be a positive multiple of -waiter-tasks (%d)", c.waiters, c.waiterTasks)
	}
	if c.echoConc <= 0 || c.getWaiters <= 0 || c.ramp <= 0 || c.sessions <= 0 || c.expirySessions <= 0 ||
		c.storeWriters <= 0 || c.storePer <= 0 || c.streamWaits <= 0 || c.streamPerSession <= 0 || c.streamProbes <= 0 {
		return c, errors.New("-echo-conc, -get-waiters, -ramp, -sessions, -expiry-sessions, -store-writers, -store-per, -stream-waits, -stream-per-session and -stream-probes must be positive")
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
	if c.cpuProfile != "" {
		if err := os.MkdirAll(c.cpuProfile, 0o755); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
	}
	// Both this process (clients + upstream) and the child bridge hold one
	// descriptor per blocked waiter, plus the store's files.
	fdNote, fdCur, err := bridgeload.RaiseNoFile(uint64(max(c.waiters, c.streamWaits)) + 4096)
	if err != nil {
		return err
	}
	rep := &report{out: out}
	store := "Badger in a temporary directory (durable group commit, as deployed)"
	if c.memStore {
		store = "in-memory (diagnostic run: no fsync)"
	}
	rep.machine(fdNote + ", bridge store " + store)
	if c.phases["waiters"] && fdCur < uint64(c.waiters)+1024 {
		rep.note("open-file limit %d is too low for %d waiters; reduce -waiters", fdCur, c.waiters)
		return fmt.Errorf("open-file limit %d too low for -waiters %d", fdCur, c.waiters)
	}
	if c.phases["streams"] && fdCur < uint64(c.streamWaits)+1024 {
		rep.note("open-file limit %d is too low for %d waits; reduce -stream-waits", fdCur, c.streamWaits)
		return fmt.Errorf("open-file limit %d too low for -stream-waits %d", fdCur, c.streamWaits)
	}

	phases := map[string]func(context.Context, config, string, *report) error{
		"echo": phaseEcho, "passthrough": phasePassthrough, "modernface": phaseModernFace, "delay": phaseDelay,
		"getrate": phaseGetRate, "store": phaseStore, "sessions": phaseSessions, "waiters": phaseWaiters,
		"streams": phaseStreams,
	}
	for _, name := range phaseOrder {
		if !c.phases[name] {
			continue
		}
		runtime.GC()
		if err := phases[name](ctx, c, exe, rep); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	rep.finish()
	return nil
}

// child describes a process under test.
type child struct {
	kind     string // bridgeload.KindBridge or KindRevProxy
	upstream string
	era      string // the upstream's era (bridge only)
	args     []string
	env      []string
}

// start runs the child; with -cpuprofile it writes DIR/KIND-PHASE.pprof.
func (ch child) start(ctx context.Context, c config, exe, phase string) (*bridgeload.Proc, error) {
	args := []string{bridgeload.ChildMode, "-kind", ch.kind, "-upstream", ch.upstream}
	if ch.kind == bridgeload.KindBridge {
		args = append(args, "-era", ch.era)
		if c.memStore {
			args = append(args, "-memory")
		}
		if c.idleConns > 0 {
			args = append(args, "-upstream-idle-conns", strconv.Itoa(c.idleConns))
		}
	}
	if c.cpuProfile != "" {
		args = append(args, "-cpuprofile", filepath.Join(c.cpuProfile, ch.kind+"-"+phase+".pprof"))
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return bridgeload.StartProc(sctx, exe, ch.env, append(args, ch.args...)...)
}

// withChildren starts the children, runs f with them, and stops them.
func withChildren(ctx context.Context, c config, exe, phase string, chs []child, f func(ps []*bridgeload.Proc) error) (err error) {
	var ps []*bridgeload.Proc
	defer func() {
		for _, p := range ps {
			err = errors.Join(err, p.Stop(15*time.Second))
		}
	}()
	for _, ch := range chs {
		p, err := ch.start(ctx, c, exe, phase)
		if err != nil {
			return err
		}
		ps = append(ps, p)
	}
	return f(ps)
}

// withBridge runs f against an upstream (opts) and a child bridge process in
// front of it.
func withBridge(ctx context.Context, c config, exe, phase string, opts demo.Options, keepAlive time.Duration, env []string,
	f func(up *bridgeload.Upstream, p *bridgeload.Proc) error) error {
	up, err := bridgeload.StartUpstream(ctx, opts)
	if err != nil {
		return err
	}
	defer up.Close()
	br := child{kind: bridgeload.KindBridge, upstream: up.URL, era: "modern", env: env,
		args: []string{"-keepalive", keepAlive.String()}}
	return withChildren(ctx, c, exe, phase, []child{br}, func(ps []*bridgeload.Proc) error { return f(up, ps[0]) })
}

// workers makes n echo callers with mk.
func workers(n int, mk func() (bridgeload.Echo, error)) ([]bridgeload.Echo, error) {
	var es []bridgeload.Echo
	for range n {
		e, err := mk()
		if err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	return es, nil
}

func modernWorkers(c config, hc *http.Client, url string) ([]bridgeload.Echo, error) {
	m := bridgeload.NewModern(hc, url)
	return workers(c.echoConc, func() (bridgeload.Echo, error) { return bridgeload.ModernEcho(m), nil })
}

func legacyWorkers(ctx context.Context, c config, hc *http.Client, url string) ([]bridgeload.Echo, error) {
	return workers(c.echoConc, func() (bridgeload.Echo, error) {
		l, err := bridgeload.DialLegacy(ctx, hc, url)
		if err != nil {
			return nil, err
		}
		return bridgeload.LegacyEcho(l), nil
	})
}

// clients returns one HTTP client per path, all of one configuration.
func clients(c config, n int) []*http.Client {
	hcs := make([]*http.Client, n)
	for i := range hcs {
		hcs[i] = bridgeload.NewHTTPClient(c.echoConc)
	}
	return hcs
}

func closeClients(hcs []*http.Client) {
	for _, hc := range hcs {
		hc.CloseIdleConnections()
	}
}

// compare runs the three paths of a cost comparison (direct, through the
// bridge, through the bare reverse proxy) and checks for errors.
func compare(ctx context.Context, c config, direct, bridged, floor []bridgeload.Echo, bridge, proxy *bridgeload.Proc) (d, b, f bridgeload.Throughput, err error) {
	// Warm every path (connections, caches, sessions) before timing.
	for _, es := range [][]bridgeload.Echo{direct, bridged, floor} {
		for _, e := range es {
			if err := e(ctx); err != nil {
				return d, b, f, fmt.Errorf("warm-up: %w", err)
			}
		}
	}
	ts, err := bridgeload.CompareThroughput(ctx, []bridgeload.Path{{Workers: direct}, {Workers: bridged, Pid: bridge.Pid()},
		{Workers: floor, Pid: proxy.Pid()}}, c.echoRounds, c.echoWindow)
	if err != nil {
		return d, b, f, err
	}
	d, b, f = ts[0], ts[1], ts[2]
	if d.Errors+b.Errors+f.Errors > 0 {
		return d, b, f, fmt.Errorf("%d direct, %d bridged and %d reverse-proxy echo errors (first: %v, %v, %v)",
			d.Errors, b.Errors, f.Errors, d.FirstErr, b.FirstErr, f.FirstErr)
	}
	return d, b, f, nil
}

func phaseEcho(ctx context.Context, c config, exe string, rep *report) error {
	up, err := bridgeload.StartUpstream(ctx, demo.Options{})
	if err != nil {
		return err
	}
	defer up.Close()
	chs := []child{{kind: bridgeload.KindBridge, upstream: up.URL, era: "modern"}, {kind: bridgeload.KindRevProxy, upstream: up.URL}}
	return withChildren(ctx, c, exe, "echo", chs, func(ps []*bridgeload.Proc) error {
		hcs := clients(c, 3)
		defer closeClients(hcs)
		direct, err := modernWorkers(c, hcs[0], up.URL)
		if err != nil {
			return err
		}
		bridged, err := legacyWorkers(ctx, c, hcs[1], ps[0].URL)
		if err != nil {
			return err
		}
		floor, err := modernWorkers(c, hcs[2], ps[1].URL)
		if err != nil {
			return err
		}
		lat, err := bridgeload.EchoLatencies(ctx, []bridgeload.Echo{direct[0], bridged[0], floor[0]}, 200, c.latRounds, c.latPer)
		if err != nil {
			return err
		}
		dt, bt, ft, err := compare(ctx, c, direct, bridged, floor, ps[0], ps[1])
		if err != nil {
			return err
		}
		rep.echo(c, lat[0], lat[1], lat[2], dt, bt, ft)
		return nil
	})
}

func phasePassthrough(ctx context.Context, c config, exe string, rep *report) error {
	up, err := bridgeload.StartUpstream(ctx, demo.Options{})
	if err != nil {
		return err
	}
	defer up.Close()
	chs := []child{{kind: bridgeload.KindBridge, upstream: up.URL, era: "modern"}, {kind: bridgeload.KindRevProxy, upstream: up.URL}}
	return withChildren(ctx, c, exe, "passthrough", chs, func(ps []*bridgeload.Proc) error {
		hcs := clients(c, 3)
		defer closeClients(hcs)
		var paths [3][]bridgeload.Echo
		for i, url := range []string{up.URL, ps[0].URL, ps[1].URL} {
			if paths[i], err = modernWorkers(c, hcs[i], url); err != nil {
				return err
			}
		}
		dt, bt, ft, err := compare(ctx, c, paths[0], paths[1], paths[2], ps[0], ps[1])
		if err != nil {
			return err
		}
		rep.passthrough(c, dt, bt, ft)
		return nil
	})
}

func phaseModernFace(ctx context.Context, c config, exe string, rep *report) error {
	upURL, stopUp, err := bridgeload.StartLegacyUpstream()
	if err != nil {
		return err
	}
	defer stopUp()
	chs := []child{{kind: bridgeload.KindBridge, upstream: upURL, era: "legacy"}, {kind: bridgeload.KindRevProxy, upstream: upURL}}
	return withChildren(ctx, c, exe, "modernface", chs, func(ps []*bridgeload.Proc) error {
		hcs := clients(c, 3)
		defer closeClients(hcs)
		direct, err := legacyWorkers(ctx, c, hcs[0], upURL)
		if err != nil {
			return err
		}
		bridged, err := modernWorkers(c, hcs[1], ps[0].URL)
		if err != nil {
			return err
		}
		floor, err := legacyWorkers(ctx, c, hcs[2], ps[1].URL)
		if err != nil {
			return err
		}
		dt, bt, ft, err := compare(ctx, c, direct, bridged, floor, ps[0], ps[1])
		if err != nil {
			return err
		}
		rep.modernFace(c, dt, bt, ft)
		return nil
	})
}

func phaseGetRate(ctx context.Context, c config, exe string, rep *report) error {
	opts := demo.Options{PollInterval: c.getPoll, DisablePush: true}
	return withBridge(ctx, c, exe, "getrate", opts, 100*time.Millisecond, nil, func(up *bridgeload.Upstream, p *bridgeload.Proc) error {
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
	return withBridge(ctx, c, exe, "waiters", demo.Options{}, 2*time.Second, env, func(up *bridgeload.Upstream, p *bridgeload.Proc) error {
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

func phaseStreams(ctx context.Context, c config, exe string, rep *report) error {
	var env []string
	if c.memLimit != "" {
		env = append(env, "GOMEMLIMIT="+c.memLimit)
	}
	return withBridge(ctx, c, exe, "streams", demo.Options{}, 2*time.Second, env, func(up *bridgeload.Upstream, p *bridgeload.Proc) error {
		var loaded func() error
		if c.profileDir != "" {
			loaded = func() error {
				for _, name := range []string{"heap", "goroutine"} {
					if err := bridgeload.SaveProfile(ctx, p.URL, name, filepath.Join(c.profileDir, "bridge-streams-"+name+".pprof")); err != nil {
						return err
					}
				}
				return nil
			}
		}
		r, err := bridgeload.ManyTasks(ctx, up, p.URL, p.Pid(), c.streamWaits, c.streamPerSession, c.ramp, c.streamHold, c.streamProbes, loaded)
		if err != nil {
			return err
		}
		rep.streams(r)
		return nil
	})
}

func phaseDelay(ctx context.Context, c config, exe string, rep *report) error {
	var push, poll bridgeload.DelayResult
	err := withBridge(ctx, c, exe, "delay-push", demo.Options{}, 10*time.Millisecond, nil, func(up *bridgeload.Upstream, p *bridgeload.Proc) error {
		var err error
		push, err = bridgeload.ResultDelay(ctx, up, p.URL, c.pushSamples)
		return err
	})
	if err != nil {
		return err
	}
	err = withBridge(ctx, c, exe, "delay-poll", demo.Options{PollInterval: c.delayPoll, DisablePush: true}, 10*time.Millisecond, nil,
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

func phaseStore(ctx context.Context, c config, _ string, rep *report) error {
	dir, err := os.MkdirTemp("", "bridgeload-store-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r, err := bridgeload.StoreWriters(ctx, dir, c.storeWriters, c.storePer)
	if err != nil {
		return err
	}
	rep.store(r)
	return nil
}

func phaseSessions(ctx context.Context, c config, exe string, rep *report) error {
	up, err := bridgeload.StartUpstream(ctx, demo.Options{})
	if err != nil {
		return err
	}
	defer up.Close()
	var env []string
	if c.memLimit != "" {
		env = append(env, "GOMEMLIMIT="+c.memLimit)
	}
	var flood bridgeload.SessionsResult
	err = withChildren(ctx, c, exe, "sessions", []child{{kind: bridgeload.KindBridge, upstream: up.URL, era: "modern", env: env}},
		func(ps []*bridgeload.Proc) error {
			var err error
			if flood, err = bridgeload.IdleSessions(ctx, ps[0].URL, ps[0].Pid(), c.sessions); err != nil || c.profileDir == "" {
				return err
			}
			return bridgeload.SaveProfile(ctx, ps[0].URL, "heap", filepath.Join(c.profileDir, "bridge-sessions-heap.pprof"))
		})
	if err != nil {
		return err
	}
	var exp bridgeload.ExpiryResult
	br := child{kind: bridgeload.KindBridge, upstream: up.URL, era: "modern", args: []string{"-session-idle-timeout", c.expiryTimeout.String()}}
	err = withChildren(ctx, c, exe, "expiry", []child{br}, func(ps []*bridgeload.Proc) error {
		var err error
		exp, err = bridgeload.SessionExpiry(ctx, ps[0].URL, ps[0].Pid(), c.expirySessions, c.expiryTimeout, c.expiryIdle)
		return err
	})
	if err != nil {
		return err
	}
	rep.sessions(flood, exp)
	return nil
}

// ---- report -------------------------------------------------------------

// row is one figure of the table; key orders the rows (the table
// first, then the earlier goals the same phases measure).
type row struct{ key, figure, measured, goal, met string }

type report struct {
	out   io.Writer
	rows  []row
	notes []string
}

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *report) add(key, figure, measured, goal string, ok bool) {
	r.rows = append(r.rows, row{key, figure, measured, goal, met(ok)})
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

func ms(d time.Duration) string { return bridgeload.Ms(d) }

// ratio is a ÷ b (0 when b is 0).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// floorRow adds the cost-floor figure of one bridge path: its CPU per call
// ÷ the bare reverse proxy's, both processes measured in the same run.
func (r *report) floorRow(key, path string, goal float64, b, f bridgeload.Throughput) {
	x := ratio(float64(b.ProxyCPUPerCall()), float64(f.ProxyCPUPerCall()))
	r.add(key, "bridge CPU per call ÷ bare httputil.ReverseProxy's, "+path,
		fmt.Sprintf("**%.2f** (%s ÷ %s)", x, ms(b.ProxyCPUPerCall()), ms(f.ProxyCPUPerCall())),
		fmt.Sprintf("≤ %.1f", goal), x <= goal)
}

func (r *report) throughputNote(name string, d, b, f bridgeload.Throughput) {
	r.note("%s: %.0f calls/s direct, %.0f through the bridge, %.0f through the reverse proxy (%d, %d, %d calls over %s per path); "+
		"CPU per call: direct %s (all in the load process), bridge path %s (of which the bridge %s), reverse-proxy path %s (of which the proxy %s)",
		name, d.PerSecond(), b.PerSecond(), f.PerSecond(), d.Calls, b.Calls, f.Calls, d.Elapsed.Round(time.Millisecond),
		ms(d.CPUPerCall()), ms(b.CPUPerCall()), ms(b.ProxyCPUPerCall()), ms(f.CPUPerCall()), ms(f.ProxyCPUPerCall()))
}

// echo reports the legacy face's figures; each one also gives the bare
// reverse proxy's own figure in the same run (the cost floor of any proxy
// process in front of this upstream on this machine).
func (r *report) echo(c config, dl, bl, fl bridgeload.Summary, dt, bt, ft bridgeload.Throughput) {
	tput := ratio(bt.PerSecond(), dt.PerSecond())
	r.add("01", fmt.Sprintf("sync tools/call throughput, bridge (legacy face) ÷ direct, %d workers", c.echoConc),
		fmt.Sprintf("**%.2f** (%.0f ÷ %.0f calls/s; bare reverse proxy %.2f)", tput, bt.PerSecond(), dt.PerSecond(), ratio(ft.PerSecond(), dt.PerSecond())),
		"≥ 0.80", tput >= 0.8)
	added := bl.P50 - dl.P50
	r.add("02", "added p50 latency of one sync tools/call (1 worker)",
		fmt.Sprintf("**+%s** (p50 %s vs %s direct; p99 %s vs %s; bare reverse proxy +%s)", ms(added), ms(bl.P50), ms(dl.P50), ms(bl.P99), ms(dl.P99), ms(fl.P50-dl.P50)),
		"≤ +0.25 ms", added <= 250*time.Microsecond)
	own := ratio(float64(bt.ProxyCPUPerCall()), float64(bt.OwnCPUPerCall()))
	r.add("03", "bridge CPU per sync call ÷ CPU of client + upstream together",
		fmt.Sprintf("**%.2f** (%s ÷ %s; bare reverse proxy %.2f)", own, ms(bt.ProxyCPUPerCall()), ms(bt.OwnCPUPerCall()),
			ratio(float64(ft.ProxyCPUPerCall()), float64(ft.OwnCPUPerCall()))), "≤ 0.25", own <= 0.25)
	r.floorRow("04a", "legacy face (legacy client → modern upstream)", 1.5, bt, ft)
	r.note("echo: %d+%d+%d calls timed for latency (direct, bridge, bare reverse proxy)", dl.N, bl.N, fl.N)
	r.throughputNote("echo (legacy face)", dt, bt, ft)
}

func (r *report) passthrough(c config, dt, bt, ft bridgeload.Throughput) {
	r.floorRow("04c", "same-era passthrough (modern → modern)", 1.1, bt, ft)
	tput := ratio(bt.PerSecond(), dt.PerSecond())
	r.add("10", fmt.Sprintf("same-era passthrough (modern → modern) throughput, bridge ÷ direct, %d workers", c.echoConc),
		fmt.Sprintf("**%.2f** (%.0f ÷ %.0f calls/s; bare reverse proxy %.2f)", tput, bt.PerSecond(), dt.PerSecond(), ratio(ft.PerSecond(), dt.PerSecond())),
		"≥ 0.90", tput >= 0.9)
	r.throughputNote("passthrough", dt, bt, ft)
}

func (r *report) modernFace(c config, dt, bt, ft bridgeload.Throughput) {
	r.floorRow("04b", "modern face (modern client → legacy upstream)", 1.5, bt, ft)
	r.throughputNote(fmt.Sprintf("modernface (legacy fixture upstream, %d workers; throughput bridge ÷ direct %.2f)",
		c.echoConc, ratio(bt.PerSecond(), dt.PerSecond())), dt, bt, ft)
}

func (r *report) getRate(g bridgeload.GetRateResult) {
	r.add("12", fmt.Sprintf("upstream tasks/get, %d waiters ÷ 1 waiter (poll %s, push off)", g.Waiters, g.PollInterval),
		fmt.Sprintf("**%.2f** (%d ÷ %d gets; blocked window %.2f)", g.Ratio(), g.GetsMany, g.GetsOne, g.WindowRatio()),
		"≤ 1.1", g.Ratio() <= 1.1 && g.Errors == 0)
	r.note("getrate: both tasks lived %s side by side; while all were blocked (%s): %d vs %d gets; %d answer errors%s",
		g.Life.Round(time.Millisecond), g.Window, g.WindowMany, g.WindowOne, g.Errors, firstErr(g.FirstErr))
}

func (r *report) waiters(base bridgeload.Mem, w bridgeload.WaitersResult) {
	ok := w.Loaded.HWM <= 256<<20 && w.Errors == 0 && w.Answered == w.Waiters && w.Blocked == w.Waiters
	r.add("05", fmt.Sprintf("bridge RSS with %d blocked legacy tasks/result (%d tasks × %d)", w.Waiters, w.Tasks, w.Waiters/w.Tasks),
		fmt.Sprintf("**%s** (peak %s; %.1f KiB per waiter; %s idle with sessions and tasks, %s at start; %d errors)",
			bridgeload.MiB(w.Loaded.RSS), bridgeload.MiB(w.Loaded.HWM), float64(w.PerWaiter())/1024,
			bridgeload.MiB(w.Idle.RSS), bridgeload.MiB(base.RSS), w.Errors),
		"≤ 256 MiB, 0 errors", ok)
	per := func(a, b uint64) float64 { return float64(int64(a)-int64(b)) / float64(w.Waiters) / 1024 }
	r.note("waiters: bridge runtime per waiter (after a GC): %.1f goroutines, stacks %.1f KiB, heap in use %.1f KiB (live %.1f KiB); runtime Sys %s loaded",
		float64(w.Runtime.Goroutines-w.RuntimeIdle.Goroutines)/float64(w.Waiters),
		per(w.Runtime.StackInuse, w.RuntimeIdle.StackInuse), per(w.Runtime.HeapInuse, w.RuntimeIdle.HeapInuse),
		per(w.Runtime.HeapLive, w.RuntimeIdle.HeapLive), bridgeload.MiB(int64(w.Runtime.Sys)))
	r.note("waiters: %d blocked, %d answered correctly, %d errors%s; ramp-up %s, drain %s; RSS after answers %s",
		w.Blocked, w.Answered, w.Errors, firstErr(w.FirstErr), w.RampUp.Round(time.Millisecond),
		w.Drain.Round(time.Millisecond), bridgeload.MiB(w.After.RSS))
}

func (r *report) streams(s bridgeload.StreamsResult) {
	rss, gor, fds := s.PerWait()
	ok := s.Loaded.HWM <= 256<<20 && s.Errors == 0 && s.Answered == s.Waits && s.Blocked == s.Waits
	r.add("13", fmt.Sprintf("bridge RSS with %d blocked legacy tasks/result on %d distinct tasks", s.Waits, s.Waits),
		fmt.Sprintf("**%s** (peak %s; per wait %.1f KiB, %.2f goroutines, %.2f fds; %s with the probe only; %d errors)",
			bridgeload.MiB(s.Loaded.RSS), bridgeload.MiB(s.Loaded.HWM), float64(rss)/1024, gor, fds, bridgeload.MiB(s.Base.RSS), s.Errors),
		"≤ 256 MiB, 0 errors", ok)
	p99 := max(s.ProbeGet.P99, s.ProbeCall.P99)
	r.add("14", "another principal's probe p99 while they are blocked, once taken in (tasks/get, tools/call)",
		fmt.Sprintf("**%s** (tasks/get p50 %s p99 %s; tools/call p50 %s p99 %s; %d probes each, %d errors%s)",
			ms(p99), ms(s.ProbeGet.P50), ms(s.ProbeGet.P99), ms(s.ProbeCall.P50), ms(s.ProbeCall.P99), s.ProbeGet.N, s.ProbeErrors, firstErr(s.ProbeFirstErr)),
		"≤ 20 ms", p99 <= 20*time.Millisecond && s.ProbeErrors == 0)
	settled := fmt.Sprintf("fell quiet (≤ %s CPU in %s) %s after the last wait was seen blocked", bridgeload.SettleCPU, bridgeload.SettleWindow, s.Settle.Round(time.Millisecond))
	if !s.Settled {
		settled = fmt.Sprintf("did not fall quiet within %s", bridgeload.SettleTimeout)
	}
	r.note("streams: right after the ramp the probe's first round took tasks/get p50 %s p99 %s, tools/call p50 %s p99 %s (%d each, figure 14's round came after: the bridge %s)",
		ms(s.SettleGet.P50), ms(s.SettleGet.P99), ms(s.SettleCall.P50), ms(s.SettleCall.P99), s.SettleGet.N, settled)
	per := func(a, b uint64) float64 { return float64(int64(a)-int64(b)) / float64(s.Waits) / 1024 }
	r.note("streams: upstream subscriptions/listen open while loaded %d (peak %d, %d opened in all) for %d tasks of one upstream session plus the probe's; %d sessions",
		s.StreamsOpen, s.StreamsPeak, s.StreamsTotal, s.Waits, s.Sessions)
	r.note("streams: bridge runtime per wait (after a GC): stacks %.1f KiB, heap in use %.1f KiB (live %.1f KiB); %d goroutines, %d fds loaded; runtime Sys %s",
		per(s.Runtime.StackInuse, s.RuntimeBase.StackInuse), per(s.Runtime.HeapInuse, s.RuntimeBase.HeapInuse),
		per(s.Runtime.HeapLive, s.RuntimeBase.HeapLive), s.Runtime.Goroutines, s.FDsLoaded, bridgeload.MiB(int64(s.Runtime.Sys)))
	r.note("streams: %d blocked, %d answered correctly, %d errors%s; %d creates in %s, ramp-up %s, drain %s; RSS idle with tasks %s, after answers %s",
		s.Blocked, s.Answered, s.Errors, firstErr(s.FirstErr), s.Waits, s.Create.Round(time.Millisecond), s.RampUp.Round(time.Millisecond),
		s.Drain.Round(time.Millisecond), bridgeload.MiB(s.Idle.RSS), bridgeload.MiB(s.After.RSS))
}

func (r *report) sessions(s bridgeload.SessionsResult, e bridgeload.ExpiryResult) {
	above := s.Loaded.RSS - s.Idle.RSS
	gPer := s.GoroutinesPerSession()
	r.add("06", fmt.Sprintf("%d idle legacy sessions (sequential initialize, no Authorization)", s.Sessions),
		fmt.Sprintf("**%s above idle** (%s; %.1f KiB and %.2f goroutines per session; %d opened, %d refused)",
			bridgeload.MiB(above), bridgeload.MiB(s.Loaded.RSS), float64(s.PerSession())/1024, gPer, s.Opened, s.Refused),
		"≤ 64 MiB above idle, no goroutine per idle session", above <= 64<<20 && gPer < 0.01)
	r.note("sessions: %d initialize in %s (%.0f/s); goroutines %d idle → %d; live heap %s → %s; resident anonymous %s → %s, file-backed %s → %s%s",
		s.Sessions, s.Elapsed.Round(time.Millisecond), float64(s.Sessions)/s.Elapsed.Seconds(),
		s.RuntimeIdle.Goroutines, s.RuntimeLoaded.Goroutines, bridgeload.MiB(int64(s.RuntimeIdle.HeapLive)),
		bridgeload.MiB(int64(s.RuntimeLoaded.HeapLive)), bridgeload.MiB(s.Idle.Anon), bridgeload.MiB(s.Loaded.Anon),
		bridgeload.MiB(s.Idle.File), bridgeload.MiB(s.Loaded.File), refusal(s.FirstRefusal))
	r.add("07", fmt.Sprintf("--session-idle-timeout %s: a session idle for %s", e.Timeout, e.Idle),
		fmt.Sprintf("**HTTP %d**; %d sessions: goroutines %d → %d → %d, live heap %s → %s → %s (before → open → idle)",
			e.Status, e.Sessions, e.RuntimeBefore.Goroutines, e.RuntimeLoaded.Goroutines, e.RuntimeAfter.Goroutines,
			bridgeload.MiB(int64(e.RuntimeBefore.HeapLive)), bridgeload.MiB(int64(e.RuntimeLoaded.HeapLive)),
			bridgeload.MiB(int64(e.RuntimeAfter.HeapLive))),
		"404; memory returned", e.Status == http.StatusNotFound && e.Released())
}

func refusal(s string) string {
	if s == "" {
		return ""
	}
	return "; first refusal: " + s
}

func (r *report) store(s bridgeload.StoreResult) {
	x := ratio(float64(s.Shared.P99), float64(s.Single.P99))
	r.add("08", fmt.Sprintf("Badger: %d concurrent durable creators, p99", s.Writers),
		fmt.Sprintf("**%s** (single writer p99 %s in the same run: %.1f×)", ms(s.Shared.P99), ms(s.Single.P99), x),
		"≤ 2 × the single-writer p99", x <= 2)
	r.note("store: one writer %.0f creates/s (p50 %s), %d writers %.0f creates/s together (p50 %s)",
		s.SingleRate, ms(s.Single.P50), s.Writers, s.SharedRate, ms(s.Shared.P50))
}

func (r *report) delay(push, poll bridgeload.DelayResult) {
	iv := float64(poll.Delays.P99) / float64(poll.PollInterval)
	r.add("09", fmt.Sprintf("completion → legacy tasks/result answer on the poll path (interval %s), p99", poll.PollInterval),
		fmt.Sprintf("**%.2f intervals** (p50 %s, p99 %s, max %s; n=%d)", iv, ms(poll.Delays.P50), ms(poll.Delays.P99), ms(poll.Delays.Max), poll.Delays.N),
		"≤ 1.0 interval", poll.Delays.P99 <= poll.PollInterval && poll.Errors == 0)
	r.add("11", "completion → legacy tasks/result answer with push, p99",
		fmt.Sprintf("**%s** (p50 %s, max %s; n=%d)", ms(push.Delays.P99), ms(push.Delays.P50), ms(push.Delays.Max), push.Delays.N),
		"≤ 20 ms", push.Delays.P99 <= 20*time.Millisecond && push.Errors == 0)
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

// figurePhases names, for every figure of the table, the phase that
// measures it, so a run of some phases still lists every figure.
var figurePhases = []struct{ key, figure, goal, phase string }{
	{"01", "sync tools/call throughput, bridge (legacy face) ÷ direct", "≥ 0.80", "echo"},
	{"02", "added p50 latency of one sync tools/call (1 worker)", "≤ +0.25 ms", "echo"},
	{"03", "bridge CPU per sync call ÷ CPU of client + upstream together", "≤ 0.25", "echo"},
	{"04a", "bridge CPU per call ÷ bare httputil.ReverseProxy's, legacy face", "≤ 1.5", "echo"},
	{"04b", "bridge CPU per call ÷ bare httputil.ReverseProxy's, modern face", "≤ 1.5", "modernface"},
	{"04c", "bridge CPU per call ÷ bare httputil.ReverseProxy's, same-era passthrough", "≤ 1.1", "passthrough"},
	{"05", "bridge RSS with blocked legacy tasks/result", "≤ 256 MiB, 0 errors", "waiters"},
	{"06", "idle legacy sessions", "≤ 64 MiB above idle, no goroutine per idle session", "sessions"},
	{"07", "--session-idle-timeout: an idle session", "404; memory returned", "sessions"},
	{"08", "Badger: concurrent durable creators, p99", "≤ 2 × the single-writer p99", "store"},
	{"09", "completion → legacy tasks/result answer on the poll path, p99", "≤ 1.0 interval", "delay"},
	{"10", "same-era passthrough throughput, bridge ÷ direct", "≥ 0.90", "passthrough"},
	{"11", "completion → legacy tasks/result answer with push, p99", "≤ 20 ms", "delay"},
	{"12", "upstream tasks/get, many waiters ÷ 1 waiter", "≤ 1.1", "getrate"},
	{"13", "bridge RSS with blocked legacy tasks/result on distinct tasks", "≤ 256 MiB, 0 errors", "streams"},
	{"14", "another principal's probe p99 while they are blocked, once taken in", "≤ 20 ms", "streams"},
}

func (r *report) finish() {
	have := map[string]bool{}
	for _, x := range r.rows {
		have[x.key] = true
	}
	for _, f := range figurePhases {
		if !have[f.key] {
			r.rows = append(r.rows, row{f.key, f.figure, "not measured (phase " + f.phase + " not run)", f.goal, "—"})
		}
	}
	// Rows in figure order, whatever order the phases ran in.
	sort.SliceStable(r.rows, func(i, j int) bool { return r.rows[i].key < r.rows[j].key })
	fmt.Fprintf(r.out, "\n| # | figure | measured | goal | met? |\n|---|---|---|---|---|\n")
	for _, x := range r.rows {
		fmt.Fprintf(r.out, "| %s | %s | %s | %s | %s |\n", strings.TrimLeft(x.key, "0"), x.figure, x.measured, x.goal, x.met)
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
