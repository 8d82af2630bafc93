// Package cluster runs several `bridge serve` replicas on one Redis behind a
// round-robin proxy without affinity, in front of one embedded modern
// upstream (internal/demo), all on loopback: the deployment of "Running
// several replicas" in docs/MIGRATION.md, small enough for a test. It backs
// the multi-replica end-to-end test and the chaos tool (bench/cmd/chaos),
// which kills replicas with SIGKILL and restarts them on the same port.
//
// Every process it starts is a child of this one, killed by Close and, on
// Linux, by the kernel if this process dies first.
package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/bench/rrproxy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
)

// startTimeout bounds how long a replica may take to print its URL.
const startTimeout = 60 * time.Second

// Options configure a cluster.
type Options struct {
	// Bridge is the bridge binary (see BuildBridge).
	Bridge string
	// Replicas is the number of bridge processes (default 3).
	Replicas int
	// Dir holds Redis's files (a temporary directory of the caller's).
	Dir string
	// RedisURL, when set, is used instead of starting a redis-server; the
	// replicas then need a key prefix of their own (RedisPrefix).
	RedisURL string
	// RedisPrefix is passed as --redis-prefix when set.
	RedisPrefix string
	// Upstream configures the embedded modern upstream.
	Upstream demo.Options
	// Args are extra `bridge serve` flags for every replica.
	Args []string
	// Stderr receives the replicas' logs (default discarded); each line is
	// prefixed with the replica's index.
	Stderr io.Writer
	// Env adds KEY=VALUE to the replicas' environment.
	Env []string
}

// Cluster is a running set of replicas. Create it with Start.
type Cluster struct {
	// URL is the proxy's MCP endpoint, http://127.0.0.1:PORT/mcp.
	URL string
	// Proxy is the round-robin proxy in front of the replicas.
	Proxy *rrproxy.Proxy
	// Upstream is the embedded modern server every replica talks to.
	Upstream *demo.Server
	// UpstreamURL is its endpoint.
	UpstreamURL string
	// Creates records the task-creating tools/call the upstream answered.
	Creates *Recorder
	// RedisURL is the store every replica shares.
	RedisURL string

	opts     Options
	replicas []*Replica
	redis    *redistest.Server
	closers  []func()
	mu       sync.Mutex // guards replicas[i] swaps
}

// Replica is one bridge process of the cluster.
type Replica struct {
	// Index is the replica's position (and the proxy's backend index).
	Index int
	// URL is its own MCP endpoint (http://127.0.0.1:PORT/mcp), the same
	// after every restart.
	URL string
	// Pid is the current process id (0 while it is down).
	Pid int

	cmd    *exec.Cmd
	exited chan struct{}
}

// Start builds the cluster: Redis (unless Options.RedisURL), the upstream,
// the replicas, then the proxy. On error everything started is stopped.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	if o.Replicas <= 0 {
		o.Replicas = 3
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	c = &Cluster{opts: o}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()

	c.RedisURL = o.RedisURL
	if c.RedisURL == "" {
		c.redis, err = redistest.Launch(o.Dir)
		if err != nil {
			return nil, err
		}
		c.closers = append(c.closers, c.redis.Stop)
		c.RedisURL = c.redis.URL
	}

	c.Upstream = demo.New(o.Upstream)
	c.Creates = newRecorder()
	upURL, stopUp, err := serve(c.Creates.wrap(c.Upstream.Handler()))
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	c.closers = append(c.closers, func() { c.Upstream.Close(); stopUp() })
	c.UpstreamURL = upURL

	backends := make([]*url.URL, o.Replicas)
	for i := range o.Replicas {
		r, err := c.start(ctx, i, "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("replica %d: %w", i, err)
		}
		c.replicas = append(c.replicas, r)
		u, _ := url.Parse(r.URL)
		backends[i] = &url.URL{Scheme: u.Scheme, Host: u.Host}
	}
	c.Proxy, err = rrproxy.New(backends)
	if err != nil {
		return nil, err
	}
	proxyURL, stopProxy, err := serve(c.Proxy)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	c.closers = append(c.closers, stopProxy)
	c.URL = proxyURL
	return c, nil
}

// serve runs h at http://127.0.0.1:PORT/mcp (every path goes to h).
func serve(h http.Handler) (endpoint string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/mcp", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close() // streams still open: cut them
		}
	}, nil
}

// Replicas returns the current replicas.
func (c *Cluster) Replicas() []*Replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Replica(nil), c.replicas...)
}

// start runs replica i listening on addr and waits for its "bridge: URL".
func (c *Cluster) start(ctx context.Context, i int, addr string) (*Replica, error) {
	args := []string{"serve", "--listen", addr, "--upstream", c.UpstreamURL, "--upstream-era", "modern",
		"--store", c.RedisURL, "--shutdown-timeout", "2s"}
	if c.opts.RedisPrefix != "" {
		args = append(args, "--redis-prefix", c.opts.RedisPrefix)
	}
	args = append(args, c.opts.Args...)
	cmd := exec.Command(c.opts.Bridge, args...)
	cmd.Env = append(os.Environ(), c.opts.Env...)
	dieWithParent(cmd)
	cmd.Stderr = &prefixWriter{w: c.opts.Stderr, prefix: fmt.Sprintf("[replica %d] ", i)}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", c.opts.Bridge, err)
	}
	r := &Replica{Index: i, Pid: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{})}
	urlc := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "bridge: "); ok {
				select {
				case urlc <- strings.TrimSpace(u):
				default:
				}
			}
		}
	}()
	go func() {
		<-scanned
		_ = cmd.Wait()
		close(r.exited)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case r.URL = <-urlc:
		return r, nil
	case <-r.exited:
		return nil, fmt.Errorf("bridge exited before serving: %v", cmd.ProcessState)
	case <-timer.C:
	case <-ctx.Done():
	}
	_ = cmd.Process.Kill()
	<-r.exited
	return nil, fmt.Errorf("bridge printed no URL within %s", startTimeout)
}

// Kill sends SIGKILL to replica i and waits until it is gone: no graceful
// stop, open streams are cut, nothing is flushed.
func (c *Cluster) Kill(i int) error {
	c.mu.Lock()
	r := c.replicas[i]
	c.mu.Unlock()
	select {
	case <-r.exited:
		return fmt.Errorf("replica %d is not running", i)
	default:
	}
	if err := r.cmd.Process.Kill(); err != nil {
		return err
	}
	<-r.exited
	return nil
}

// Restart starts replica i again on the port it had (after Kill, or after it
// exited).
func (c *Cluster) Restart(ctx context.Context, i int) error {
	c.mu.Lock()
	old := c.replicas[i]
	c.mu.Unlock()
	select {
	case <-old.exited:
	default:
		return fmt.Errorf("replica %d is still running", i)
	}
	u, err := url.Parse(old.URL)
	if err != nil {
		return err
	}
	r, err := c.start(ctx, i, u.Host)
	if err != nil {
		return err
	}
	if r.URL != old.URL {
		_ = r.cmd.Process.Kill()
		<-r.exited
		return fmt.Errorf("replica %d came back on %s, not %s", i, r.URL, old.URL)
	}
	c.mu.Lock()
	c.replicas[i] = r
	c.mu.Unlock()
	return nil
}

// Running reports whether replica i is up.
func (c *Cluster) Running(i int) bool {
	c.mu.Lock()
	r := c.replicas[i]
	c.mu.Unlock()
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

// Close kills every replica and stops the proxy, the upstream and Redis.
func (c *Cluster) Close() {
	c.mu.Lock()
	rs := append([]*Replica(nil), c.replicas...)
	c.mu.Unlock()
	for _, r := range rs {
		select {
		case <-r.exited:
		default:
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	}
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i]()
	}
	c.closers = nil
}

// BuildBridge builds ./cmd/bridge of this module into dir (with the race
// detector when race is set) and returns the binary's path. It runs `go
// build` in the current directory, which must be inside the module.
func BuildBridge(ctx context.Context, dir string, race bool) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("the go tool is not on PATH: it builds the bridge for the cluster")
	}
	bin := dir + string(os.PathSeparator) + "bridge"
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "github.com/tasksbridge/tasksbridge/cmd/bridge")
	if out, err := exec.CommandContext(ctx, goBin, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

// prefixWriter writes each line with a prefix (lines of one Write; replica
// logs are line-buffered by slog).
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			if _, err := io.WriteString(p.w, p.prefix+line); err != nil {
				return 0, err
			}
		}
	}
	return len(b), nil
}
