package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Node is one redis-server (or sentinel) process on a fixed loopback port,
// which can be killed with SIGKILL and started again on the same port with
// the same files: the failover and restart cases of the HA topologies.
type Node struct {
	// Addr is 127.0.0.1:PORT, the same after every restart.
	Addr string
	// Dir holds the node's files (config, AOF, nodes.conf).
	Dir string

	bin   string
	args  []string
	ready string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	running bool
}

// Running reports whether the node's process is up.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.running
}

// start runs the node and waits until its log shows ready (or it exits).
func (n *Node) start(extra ...string) error {
	args := append(append([]string(nil), n.args...), extra...)
	cmd := exec.Command(n.bin, args...)
	cmd.Dir = n.Dir
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", n.bin, err)
	}
	exited := make(chan struct{})
	seen := make(chan struct{})
	var tail strings.Builder
	var tailMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(out)
		found := false
		for sc.Scan() {
			line := sc.Text()
			tailMu.Lock()
			if tail.Len() < 8192 {
				tail.WriteString(line + "\n")
			}
			tailMu.Unlock()
			if !found && strings.Contains(line, n.ready) {
				found = true
				close(seen)
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(exited)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-seen:
	case <-exited:
		tailMu.Lock()
		defer tailMu.Unlock()
		return fmt.Errorf("%s on %s exited before it was ready; its log:\n%s", filepath.Base(n.bin), n.Addr, tail.String())
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("%s on %s not ready after %s", filepath.Base(n.bin), n.Addr, startTimeout)
	}
	n.mu.Lock()
	n.cmd, n.exited, n.running = cmd, exited, true
	n.mu.Unlock()
	return nil
}

// Kill sends SIGKILL and waits until the process is gone (no-op when down).
func (n *Node) Kill() {
	n.mu.Lock()
	cmd, exited, running := n.cmd, n.exited, n.running
	n.running = false
	n.mu.Unlock()
	if !running {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Restart starts a killed node again on its port with its files, with
// extra arguments for this start only.
func (n *Node) Restart(extra ...string) error {
	if n.Running() {
		return fmt.Errorf("redistest: node %s is still running", n.Addr)
	}
	return n.start(extra...)
}

func newNode(root, name, bin string, port int, args []string, ready string) (*Node, error) {
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &Node{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, bin: bin, args: args, ready: ready}, nil
}

// serverArgs are a data node's base arguments: loopback, its own dir, log on
// stdout. With aof, every write is appended and fsynced before the reply
// (appendfsync always: with everysec, Redis may answer while a write to the
// AOF is postponed behind a slow fsync), so a node killed with SIGKILL and
// restarted keeps everything it acknowledged.
func serverArgs(port int, dir string, aof bool) []string {
	a := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
		"--logfile", "", "--daemonize", "no", "--loglevel", "notice", "--repl-diskless-sync-delay", "0",
		"--protected-mode", "no"}
	if aof {
		return append(a, "--appendonly", "yes", "--appendfsync", "always")
	}
	return append(a, "--appendonly", "no")
}

// freePorts returns n distinct free loopback ports (each may be taken by
// someone else before it is bound; the callers then fail and say so).
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	var out []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// Sentinel is a Sentinel-managed primary with one replica and three
// sentinels, on loopback.
type Sentinel struct {
	// URL is redis+sentinel://S1,S2,S3/MasterName/0, the store URL.
	URL string
	// MasterName is the monitored master's name.
	MasterName string
	// Data are the two data nodes (which one is primary changes on failover).
	Data []*Node
	// Sentinels are the three sentinel processes.
	Sentinels []*Node
}

// DownAfter is the sentinels' down-after-milliseconds: how long a primary
// is unreachable before a failover starts.
const DownAfter = 1000 * time.Millisecond

// LaunchSentinel starts the Sentinel topology in dir; the caller must call
// Stop. redis-sentinel (Debian's redis-sentinel package) is used when on
// PATH, else redis-server --sentinel (the same program).
func LaunchSentinel(dir string) (*Sentinel, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New(InstallHint)
	}
	sbin, sarg := bin, []string{"--sentinel"}
	if p, err := exec.LookPath("redis-sentinel"); err == nil {
		sbin, sarg = p, nil
	}
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	s := &Sentinel{MasterName: "tbmaster"}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	for i := range 2 {
		n, err := newNode(dir, fmt.Sprintf("data%d", i), bin, ports[i], nil, "")
		if err != nil {
			return nil, err
		}
		n.args = serverArgs(ports[i], n.Dir, false)
		n.ready = "Ready to accept connections"
		var extra []string
		if i == 1 {
			extra = []string{"--replicaof", "127.0.0.1", strconv.Itoa(ports[0])}
			n.ready = "MASTER <-> REPLICA sync: Finished with success"
		}
		if err := n.start(extra...); err != nil {
			return nil, err
		}
		s.Data = append(s.Data, n)
	}
	var addrs []string
	for i := range 3 {
		port := ports[2+i]
		n, err := newNode(dir, fmt.Sprintf("sentinel%d", i), sbin, port, nil, "+monitor master")
		if err != nil {
			return nil, err
		}
		conf := filepath.Join(n.Dir, "sentinel.conf")
		// A sentinel rewrites its config file (it must be writable): the
		// replicas and peers it learnt survive its restart.
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nprotected-mode no\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %s %d\n"+
			"sentinel failover-timeout %s 10000\n"+
			"sentinel parallel-syncs %s 1\n",
			port, n.Dir, s.MasterName, ports[0], s.MasterName, DownAfter.Milliseconds(), s.MasterName, s.MasterName)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			return nil, err
		}
		n.args = append([]string{conf}, sarg...)
		n.args = append(n.args, "--logfile", "", "--daemonize", "no", "--loglevel", "notice")
		if err := n.start(); err != nil {
			return nil, err
		}
		s.Sentinels = append(s.Sentinels, n)
		addrs = append(addrs, n.Addr)
	}
	s.URL = "redis+sentinel://" + strings.Join(addrs, ",") + "/" + s.MasterName + "/0"
	// Wait until every sentinel knows the replica and its peers, so that a
	// failover can be agreed on from the first kill.
	if err := s.waitSettled(startTimeout); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

func (s *Sentinel) waitSettled(d time.Duration) error {
	deadline := time.Now().Add(d)
	for _, sn := range s.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
		for {
			m, err := c.Master(context.Background(), s.MasterName).Result()
			if err == nil && m["num-slaves"] == "1" && m["num-other-sentinels"] == "2" {
				break
			}
			if time.Now().After(deadline) {
				_ = c.Close()
				return fmt.Errorf("sentinel %s does not see the replica and its 2 peers: %v %v", sn.Addr, m, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = c.Close()
	}
	return nil
}

// PrimaryAddr asks the sentinels which node is the primary now.
func (s *Sentinel) PrimaryAddr(ctx context.Context) (string, error) {
	var last error
	for _, sn := range s.Sentinels {
		if !sn.Running() {
			continue
		}
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
		a, err := c.GetMasterAddrByName(ctx, s.MasterName).Result()
		_ = c.Close()
		if err == nil && len(a) == 2 {
			return net.JoinHostPort(a[0], a[1]), nil
		}
		last = err
	}
	return "", fmt.Errorf("no sentinel names the primary: %v", last)
}

// Primary returns the data node the sentinels name as primary.
func (s *Sentinel) Primary(ctx context.Context) (*Node, error) {
	a, err := s.PrimaryAddr(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range s.Data {
		if n.Addr == a {
			return n, nil
		}
	}
	return nil, fmt.Errorf("the sentinels name %s, which is not a node of this setup", a)
}

// Failover kills the primary with SIGKILL, waits until the sentinels have
// promoted the replica, then restarts the old primary as a replica of the
// new one (empty: no persistence, it syncs in full) and waits for its sync.
// It returns when the primary was killed (its process gone) and the time
// from then to the sentinels naming the new primary.
func (s *Sentinel) Failover(ctx context.Context, down time.Duration) (killed time.Time, promoted time.Duration, err error) {
	killed, promoted, err = s.failover(ctx, down)
	return
}

func (s *Sentinel) failover(ctx context.Context, down time.Duration) (time.Time, time.Duration, error) {
	old, err := s.Primary(ctx)
	if err != nil {
		return time.Time{}, 0, err
	}
	old.Kill()
	killed := time.Now()
	var promoted time.Duration
	for {
		a, err := s.PrimaryAddr(ctx)
		if err == nil && a != old.Addr {
			promoted = time.Since(killed)
			break
		}
		if ctx.Err() != nil {
			return killed, 0, ctx.Err()
		}
		if time.Since(killed) > 60*time.Second {
			return killed, 0, fmt.Errorf("no failover within 60s of killing %s: %v", old.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d := down - time.Since(killed); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return killed, promoted, ctx.Err()
		}
	}
	np, err := s.PrimaryAddr(ctx)
	if err != nil {
		return killed, promoted, err
	}
	host, port, _ := net.SplitHostPort(np)
	old.ready = "MASTER <-> REPLICA sync: Finished with success"
	if err := old.Restart("--replicaof", host, port); err != nil {
		return killed, promoted, err
	}
	return killed, promoted, nil
}

// Stop kills every process of the setup.
func (s *Sentinel) Stop() {
	for _, n := range append(append([]*Node(nil), s.Sentinels...), s.Data...) {
		n.Kill()
	}
}

// RedisCluster is a Redis Cluster of primaries without replicas, on
// loopback, each with an AOF so a node killed and restarted keeps its data.
type RedisCluster struct {
	// URL is redis+cluster://N1,N2,N3, the store URL.
	URL string
	// Nodes are the primaries.
	Nodes []*Node
}

// LaunchCluster starts n primaries in dir, joins them (redis-cli --cluster
// create, the slots split evenly) and waits until every node reports
// cluster_state:ok. The caller must call Stop.
func LaunchCluster(dir string, n int) (*RedisCluster, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New(InstallHint)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, errors.New("redis-cli is not on PATH (Debian's redis-tools package): it creates the test cluster")
	}
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	c := &RedisCluster{}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	var addrs []string
	for i := range n {
		nd, err := newNode(dir, fmt.Sprintf("node%d", i), bin, ports[i], nil, "Ready to accept connections")
		if err != nil {
			return nil, err
		}
		nd.args = append(serverArgs(ports[i], nd.Dir, true),
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
			// A node restarted with its AOF reloads it before it serves.
			"--cluster-require-full-coverage", "yes")
		if err := nd.start(); err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, nd)
		addrs = append(addrs, nd.Addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := c.WaitOK(startTimeout); err != nil {
		return nil, err
	}
	c.URL = "redis+cluster://" + strings.Join(addrs, ",")
	ok = true
	return c, nil
}

// WaitOK waits until every running node reports cluster_state:ok and
// agrees on the slot map.
func (c *RedisCluster) WaitOK(d time.Duration) error {
	deadline := time.Now().Add(d)
	for _, nd := range c.Nodes {
		cl := redis.NewClient(&redis.Options{Addr: nd.Addr})
		for {
			info, err := cl.ClusterInfo(context.Background()).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				_ = cl.Close()
				return fmt.Errorf("cluster node %s not ok after %s: %v\n%s", nd.Addr, d, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = cl.Close()
	}
	return nil
}

// NodeID returns the cluster node id of node i.
func (c *RedisCluster) NodeID(ctx context.Context, i int) (string, error) {
	cl := redis.NewClient(&redis.Options{Addr: c.Nodes[i].Addr})
	defer cl.Close()
	return cl.Do(ctx, "CLUSTER", "MYID").Text()
}

// Reshard moves slots slots from node from to node to with redis-cli
// --cluster reshard while clients may be running (they see ASK and MOVED).
func (c *RedisCluster) Reshard(ctx context.Context, from, to, slots int) error {
	fid, err := c.NodeID(ctx, from)
	if err != nil {
		return err
	}
	tid, err := c.NodeID(ctx, to)
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "redis-cli", "--cluster", "reshard", c.Nodes[from].Addr,
		"--cluster-from", fid, "--cluster-to", tid, "--cluster-slots", strconv.Itoa(slots),
		"--cluster-yes", "--cluster-pipeline", "10").CombinedOutput()
	if err != nil {
		return fmt.Errorf("redis-cli --cluster reshard: %v\n%s", err, out)
	}
	return nil
}

// Stop kills every node.
func (c *RedisCluster) Stop() {
	for _, n := range c.Nodes {
		n.Kill()
	}
}

// Shared topologies: started once per test binary (a package's tests share
// them, each test under a fresh key prefix) and stopped by StopShared, which
// the package's TestMain calls after m.Run.
var shared struct {
	mu       sync.Mutex
	dir      string
	sentinel *Sentinel
	cluster  *RedisCluster
	errS     error
	errC     error
	doneS    bool
	doneC    bool
}

func sharedDir() (string, error) {
	if shared.dir == "" {
		d, err := os.MkdirTemp("", "tasksbridge-redistest-")
		if err != nil {
			return "", err
		}
		shared.dir = d
	}
	return shared.dir, nil
}

// SharedSentinel returns this test binary's Sentinel setup, started on first
// use. A test that fails it over (Failover) must leave it with one primary
// and one synced replica, as Failover does.
func SharedSentinel(t interface {
	Helper()
	Fatalf(string, ...any)
}) *Sentinel {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.doneS {
		shared.doneS = true
		dir, err := sharedDir()
		if err == nil {
			shared.sentinel, err = LaunchSentinel(filepath.Join(dir, "sentinel"))
		}
		shared.errS = err
	}
	if shared.errS != nil {
		t.Fatalf("redistest: cannot start the Sentinel setup: %v", shared.errS)
	}
	return shared.sentinel
}

// SharedCluster returns this test binary's 3-primary Redis Cluster, started
// on first use.
func SharedCluster(t interface {
	Helper()
	Fatalf(string, ...any)
}) *RedisCluster {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.doneC {
		shared.doneC = true
		dir, err := sharedDir()
		if err == nil {
			shared.cluster, err = LaunchCluster(filepath.Join(dir, "cluster"), 3)
		}
		shared.errC = err
	}
	if shared.errC != nil {
		t.Fatalf("redistest: cannot start the Redis Cluster: %v", shared.errC)
	}
	return shared.cluster
}

// StopShared stops the shared topologies and removes their files.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.sentinel != nil {
		shared.sentinel.Stop()
	}
	if shared.cluster != nil {
		shared.cluster.Stop()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
}
