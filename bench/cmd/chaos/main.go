// Command chaos is the bridge's chaos suite (`make chaos`, never part of
// `make test`): on loopback only, it starts a redis-server of its own, the
// embedded modern upstream, several `bridge serve --store redis://...`
// replicas built from this checkout and a round-robin proxy without
// affinity (bench/cluster), then runs official TypeScript SDK legacy
// clients (interop/ts/chaos-client.mjs) creating, polling, waiting on
// tasks/result, listing, cancelling and answering elicitations through the
// proxy, while it kills a random replica with SIGKILL every few seconds and
// restarts it on the same port. At the end every acknowledged task is
// checked against what the upstream created, and the figures are printed as
// a Markdown table (docs/RELIABILITY.md records a run).
//
// With -topology sentinel the store is a Sentinel setup (1 primary, 1
// replica, 3 sentinels, internal/testkit/redistest) and the Redis primary is killed
// with SIGKILL every -failover-every as well: the sentinels promote the
// replica and the old primary comes back as a replica of the new one. A
// probe writes through the store's own code meanwhile (the bridges'
// --redis-wait-replicas and failover timeout), so the stall each failover
// costs a write is measured, and so are the probe writes it loses.
//
// Exit status: 0 when every figure whose goal is zero is zero, 3 when one is
// not, 1 when the run itself could not be made. The run is bounded: the kill
// phase lasts -duration, then the clients finish their last task within
// -task-budget; every child process is killed at the end (and by the kernel
// if this process dies first, on Linux).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tasksbridge/tasksbridge/bench/cluster"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
)

type config struct {
	duration, killEvery, down, reqTimeout, taskBudget time.Duration
	replicas, clients                                 int
	seed                                              uint64
	bridge, kinds                                     string
	verbose                                           bool

	topology                   string
	failoverEvery, primaryDown time.Duration
	waitReplicas               int

	// resultAtOnce: clients call tasks/result right after the create, so
	// kills cut open waits; cutStreams: the proxy ends a killed replica's
	// streams at once (rrproxy Cut).
	resultAtOnce, cutStreams bool
}

func main() {
	var c config
	flag.DurationVar(&c.duration, "duration", 60*time.Second, "how long replicas are killed while the clients work")
	flag.DurationVar(&c.killEvery, "kill-every", 4*time.Second, "mean interval between two kills (each is uniform in [x/2, 3x/2])")
	flag.DurationVar(&c.down, "down", 500*time.Millisecond, "how long a killed replica stays down before it restarts on its port")
	flag.IntVar(&c.replicas, "replicas", 3, "bridge processes behind the proxy")
	flag.IntVar(&c.clients, "clients", 4, "concurrent TypeScript SDK legacy clients (one session each)")
	flag.DurationVar(&c.reqTimeout, "request-timeout", 30*time.Second, "the clients' request timeout (the SDK default is 60s)")
	flag.DurationVar(&c.taskBudget, "task-budget", 90*time.Second, "how long one task may take the client, retries included")
	flag.Uint64Var(&c.seed, "seed", 0, "random seed for the choice of victims and intervals (0: from the clock)")
	flag.StringVar(&c.bridge, "bridge", "", "bridge binary (default: build ./cmd/bridge of this checkout)")
	flag.StringVar(&c.kinds, "kinds", "slow,elicit,cancel,iserror", "task kinds the clients cycle through: slow (completes), elicit (asks one input), cancel, iserror (a failed task)")
	flag.BoolVar(&c.verbose, "v", false, "show the replicas' warnings and the clients' stderr")
	flag.StringVar(&c.topology, "topology", "single", "the store: single (one redis-server) or sentinel (1 primary, 1 replica, 3 sentinels; the primary is killed too)")
	flag.DurationVar(&c.failoverEvery, "failover-every", 20*time.Second, "with -topology sentinel: mean interval between two kills of the Redis primary (uniform in [x/2, 3x/2])")
	flag.DurationVar(&c.primaryDown, "primary-down", 2*time.Second, "with -topology sentinel: how long a killed primary stays down before it restarts as a replica")
	flag.IntVar(&c.waitReplicas, "wait-replicas", 0, "the bridges' --redis-wait-replicas")
	flag.BoolVar(&c.resultAtOnce, "result-at-once", false, "clients call tasks/result right after creating a task (slow, elicit, iserror), so replica kills cut waits that are open")
	flag.BoolVar(&c.cutStreams, "cut-streams", false, "the proxy ends every stream of a replica the moment it is killed, as a load balancer that notices a dead backend does")
	flag.Parse()
	if c.topology != "single" && c.topology != "sentinel" {
		fmt.Fprintln(os.Stderr, "chaos: -topology is single or sentinel")
		os.Exit(2)
	}
	if c.replicas < 2 || c.clients < 1 || c.duration <= 0 || c.killEvery <= 0 {
		fmt.Fprintln(os.Stderr, "chaos: need -replicas ≥ 2, -clients ≥ 1 and positive -duration and -kill-every")
		os.Exit(2)
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	f, err := run(ctx, c)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
	f.write(os.Stdout, c)
	if !f.clean() {
		os.Exit(3)
	}
}

func run(ctx context.Context, c config) (*figures, error) {
	node, script, err := findClient()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tasksbridge-chaos-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if c.bridge == "" {
		fmt.Fprintln(os.Stderr, "chaos: building ./cmd/bridge")
		if c.bridge, err = cluster.BuildBridge(ctx, dir, false); err != nil {
			return nil, err
		}
	}
	var logs io.Writer = io.Discard
	if c.verbose {
		logs = os.Stderr
	}
	opts := cluster.Options{Bridge: c.bridge, Replicas: c.replicas, Dir: dir, Stderr: logs,
		Upstream: demo.Options{PollInterval: 100 * time.Millisecond},
		Args:     []string{"--log-level", "warn", "--redis-wait-replicas", strconv.Itoa(c.waitReplicas)}}
	var sen *redistest.Sentinel
	if c.topology == "sentinel" {
		if sen, err = redistest.LaunchSentinel(filepath.Join(dir, "sentinel")); err != nil {
			return nil, err
		}
		defer sen.Stop()
		opts.RedisURL, opts.RedisPrefix = sen.URL, "chaos"
	}
	cl, err := cluster.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	fmt.Fprintf(os.Stderr, "chaos: %d replicas on %s behind %s; %d clients for %s, a kill every ~%s (seed %d; tasks/result at once %v, streams cut by the proxy %v)\n",
		c.replicas, cl.RedisURL, cl.URL, c.clients, c.duration, c.killEvery, c.seed, c.resultAtOnce, c.cutStreams)
	var pr *probe
	if sen != nil {
		if pr, err = startProbe(ctx, sen.URL, c.waitReplicas); err != nil {
			return nil, err
		}
		defer pr.close()
	}

	var resumeGETs, bareGETs atomic.Int64
	cl.Proxy.OnRequest(func(_ int, r *http.Request) {
		if r.Method != http.MethodGet {
			return
		}
		if r.Header.Get("Last-Event-ID") != "" {
			resumeGETs.Add(1)
		} else {
			bareGETs.Add(1)
		}
	})

	dctx, cancelDriver := context.WithTimeout(ctx, c.duration+c.taskBudget+30*time.Second)
	defer cancelDriver()
	cmd := exec.CommandContext(dctx, node, script, "--mode", "chaos",
		"--clients", strconv.Itoa(c.clients),
		"--duration-ms", strconv.FormatInt(c.duration.Milliseconds(), 10),
		"--request-timeout-ms", strconv.FormatInt(c.reqTimeout.Milliseconds(), 10),
		"--task-budget-ms", strconv.FormatInt(c.taskBudget.Milliseconds(), 10),
		"--kinds", c.kinds)
	if c.resultAtOnce {
		cmd.Args = append(cmd.Args, "--result-at-once")
	}
	cmd.Args = append(cmd.Args, cl.URL)
	cmd.Dir = filepath.Dir(script)
	cmd.Stderr = logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the TypeScript clients: %w", err)
	}
	lines := make(chan []line, 1)
	go func() { lines <- readLines(out) }()

	f := &figures{Topology: c.topology, WaitReplicas: c.waitReplicas}
	rng := rand.New(rand.NewPCG(c.seed, c.seed^0x9e3779b97f4a7c15))
	start := time.Now()
	end := start.Add(c.duration)
	failovers := make(chan failoverResult, 1)
	if sen != nil {
		frng := rand.New(rand.NewPCG(c.seed^0x5bd1e995, c.seed))
		go func() { failovers <- killPrimaries(ctx, sen, pr, frng, c, start, end) }()
	} else {
		failovers <- failoverResult{}
	}
	for {
		wait := c.killEvery/2 + time.Duration(rng.Int64N(int64(c.killEvery)))
		if time.Now().Add(wait).After(end) {
			break
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		victim := rng.IntN(c.replicas)
		if err := cl.Kill(victim); err != nil {
			return nil, fmt.Errorf("kill replica %d: %w", victim, err)
		}
		if c.cutStreams {
			cl.Proxy.Cut(victim)
		}
		select {
		case <-time.After(c.down):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := cl.Restart(ctx, victim); err != nil {
			return nil, fmt.Errorf("restart replica %d: %w", victim, err)
		}
		f.Cycles++
		fmt.Fprintf(os.Stderr, "chaos: %5.1fs kill -9 replica %d, restarted (cycle %d)\n", time.Since(start).Seconds(), victim, f.Cycles)
	}
	fo := <-failovers
	if fo.err != nil {
		return nil, fo.err
	}
	f.Failovers, f.Promotions = fo.n, fo.promotions
	fmt.Fprintln(os.Stderr, "chaos: kill phase over; waiting for the clients to finish their last tasks")
	recs := <-lines
	werr := cmd.Wait()
	if dctx.Err() != nil {
		f.DriverKilled = true
	} else if werr != nil {
		return nil, fmt.Errorf("the TypeScript clients failed: %v (run with -v for their stderr)", werr)
	}
	f.Elapsed = time.Since(start)
	f.account(recs, cl.Creates.Markers(), cl.Upstream.Status, cl.Upstream.Counters())
	f.ResumeGETs, f.BareGETs = int(resumeGETs.Load()), int(bareGETs.Load())
	if pr != nil {
		pr.stop()
		pf := pr.figures(ctx, fo.kills)
		f.ProbeAcked, f.ProbeLost, f.ProbeErrors, f.Stalls = pf.acked, pf.lost, pf.errors, pf.stalls
	}
	return f, nil
}

type failoverResult struct {
	n          int
	kills      []time.Time
	promotions []time.Duration
	err        error
}

// killPrimaries kills the Redis primary every ~failoverEvery until end
// (each Failover waits for the promotion, keeps the old primary down for
// -primary-down, then restarts it as a replica and waits for its sync).
func killPrimaries(ctx context.Context, sen *redistest.Sentinel, pr *probe, rng *rand.Rand, c config, start, end time.Time) failoverResult {
	var r failoverResult
	for {
		wait := c.failoverEvery/2 + time.Duration(rng.Int64N(int64(c.failoverEvery)))
		if time.Now().Add(wait).After(end) {
			return r
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			r.err = ctx.Err()
			return r
		}
		killed, took, err := sen.Failover(ctx, c.primaryDown)
		if err != nil {
			r.err = fmt.Errorf("Redis failover %d: %w", r.n+1, err)
			return r
		}
		r.kills = append(r.kills, killed)
		r.n++
		r.promotions = append(r.promotions, took)
		fmt.Fprintf(os.Stderr, "chaos: %5.1fs kill -9 of the Redis primary; the sentinels promoted the replica after %s (failover %d)\n",
			r.kills[len(r.kills)-1].Sub(start).Seconds(), took.Round(time.Millisecond), r.n)
	}
}

// findClient locates node and interop/ts/chaos-client.mjs (with its
// node_modules) from the working directory, which must be in the checkout.
func findClient() (node, script string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", "", errors.New("node is not on PATH: the chaos clients are the TypeScript SDK's (Node 20 or later)")
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		ts := filepath.Join(d, "interop", "ts")
		if _, err := os.Stat(filepath.Join(ts, "chaos-client.mjs")); err == nil {
			if _, err := os.Stat(filepath.Join(ts, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
				return "", "", errors.New("interop/ts is not installed: run `make interop-deps` at the repository root")
			}
			return node, filepath.Join(ts, "chaos-client.mjs"), nil
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("no interop/ts/chaos-client.mjs above %s: run the chaos tool inside the checkout", wd)
		}
	}
}

// line is one JSON line of chaos-client.mjs.
type line struct {
	Type      string   `json:"type"`
	Client    string   `json:"client"`
	Kind      string   `json:"kind"`
	Marker    string   `json:"marker"`
	TaskID    string   `json:"taskId"`
	Expect    string   `json:"expect"`
	Final     string   `json:"final"`
	ResultOK  bool     `json:"resultOk"`
	Presented int      `json:"presented"`
	Errors    int      `json:"errors"`
	Timeouts  int      `json:"timeouts"`
	Unknown   bool     `json:"unknown"`
	Detail    string   `json:"detail"`
	Error     string   `json:"error"`
	Timeout   bool     `json:"timeout"`
	Missing   []string `json:"missing"`
	Requests  int      `json:"requests"`
	Lost      int      `json:"sessionsLost"`
}

func readLines(r io.Reader) []line {
	var out []line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var l line
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Type != "" {
			out = append(out, l)
		}
	}
	_, _ = io.Copy(io.Discard, r)
	return out
}
