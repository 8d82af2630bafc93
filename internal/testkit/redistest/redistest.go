// Package redistest provides a real Redis server to tests.
//
// Start uses the Redis named by $TASKSBRIDGE_REDIS_URL when it is set, and
// otherwise starts its own redis-server (from Debian's redis-server package)
// on a free loopback port, in a temporary directory, without persistence, and
// stops it when the test ends. A missing redis-server fails the test with the
// install hint: a test that needs Redis never skips silently.
//
// Tests share a server and isolate their data with a fresh key prefix each
// (Server.Prefix), whose keys are deleted at the end; nothing here ever
// flushes a database, so a Redis given through $TASKSBRIDGE_REDIS_URL keeps
// everything that is not the tests' own.
package redistest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// EnvURL names the environment variable with the URL of a Redis tests may
// use (their keys carry a fresh prefix; nothing is flushed).
const EnvURL = "TASKSBRIDGE_REDIS_URL"

// InstallHint is what a test says when redis-server is missing.
const InstallHint = "redis-server is not on PATH: install it (apt-get install redis-server) " +
	"or set " + EnvURL + " to a Redis the tests may use"

// startTimeout bounds how long a started server may take to accept connections.
const startTimeout = 20 * time.Second

// Server is a Redis for one test (and its subtests).
type Server struct {
	// URL is redis://HOST:PORT/DB.
	URL string
	// Addr is HOST:PORT.
	Addr string
	// Started reports whether this package started the server (and will stop it).
	Started bool

	stop func()
}

// Stop kills a server this package started (an outage, for tests of what
// follows); it is a no-op for the server of $TASKSBRIDGE_REDIS_URL.
func (s *Server) Stop() {
	if s.stop != nil {
		s.stop()
	}
}

// Start returns the Redis of $TASKSBRIDGE_REDIS_URL, or starts one for t
// (stopped at t's cleanup).
func Start(t testing.TB) *Server {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" {
			// The value is not printed: it may hold a password.
			t.Fatalf("redistest: %s is not a redis:// or rediss:// URL", EnvURL)
		}
		return &Server{URL: u, Addr: pu.Host}
	}
	return StartLocal(t)
}

// StartLocal always starts a redis-server of its own, with extra arguments
// appended to the command line (e.g. "--appendonly", "yes").
func StartLocal(t testing.TB, extra ...string) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal(InstallHint)
	}
	s, err := Launch(t.TempDir(), extra...)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Launch starts a redis-server of its own on a free loopback port, with its
// files in dir and extra arguments appended, for programs that are not
// tests (the chaos tool); the caller must call Stop. A missing redis-server
// is an error carrying InstallHint.
func Launch(dir string, extra ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New(InstallHint)
	}
	var lastErr error
	// A free port found by listening can be taken by someone else before
	// redis-server binds it; try again with another.
	for range 3 {
		s, err := startOnFreePort(dir, bin, extra)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("cannot start redis-server: %w", lastErr)
}

// StartReplica starts a redis-server replicating primary (which must be
// reachable from this host) and returns once its initial sync is done, so a
// WAIT 1 on the primary can succeed.
func StartReplica(t testing.TB, primary *Server) *Server {
	t.Helper()
	host, port, err := net.SplitHostPort(primary.Addr)
	if err != nil {
		t.Fatalf("redistest: primary address %q: %v", primary.Addr, err)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal(InstallHint)
	}
	s, err := startOnFreePort(t.TempDir(), bin, []string{"--replicaof", host, port}, "MASTER <-> REPLICA sync: Finished with success")
	if err != nil {
		t.Fatalf("redistest: cannot start a replica: %v", err)
	}
	t.Cleanup(s.Stop)
	// The replica's log says it loaded the data; the primary counts it for
	// WAIT only once it has its acknowledgement. That state has no event to
	// wait on from here, so poll the primary with a deadline.
	o, err := redis.ParseURL(primary.URL)
	if err != nil {
		t.Fatalf("redistest: primary URL: %v", err)
	}
	c := redis.NewClient(o)
	defer c.Close()
	online := "port=" + strconv.Itoa(portOf(s.Addr)) + ",state=online"
	deadline := time.Now().Add(startTimeout)
	for {
		info, err := c.Info(context.Background(), "replication").Result()
		if err == nil && strings.Contains(info, online) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: the primary at %s does not list the replica as online: %v\n%s", primary.Addr, err, info)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func portOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startOnFreePort starts redis-server and waits, reading its log, until it
// has printed every one of ready (default: it accepts connections) or has
// exited. Reading the log rather than polling the port makes start-up an
// event, not a guess.
func startOnFreePort(dir, bin string, extra []string, ready ...string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--appendonly", "no",
		"--logfile", "", "--daemonize", "no", "--loglevel", "notice",
		// A replica syncs at once instead of after the default 5 s delay.
		"--repl-diskless-sync-delay", "0",
	}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	exited := make(chan struct{})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
	}
	want := ready
	if len(want) == 0 {
		want = []string{"Ready to accept connections"}
	}
	seen := make(chan error, 1)
	var tail strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		pending := append([]string(nil), want...)
		for sc.Scan() {
			line := sc.Text()
			if tail.Len() < 4096 {
				tail.WriteString(line + "\n")
			}
			for i, w := range pending {
				if strings.Contains(line, w) {
					pending = append(pending[:i], pending[i+1:]...)
					break
				}
			}
			if len(pending) == 0 {
				seen <- nil
				_, _ = io.Copy(io.Discard, out) // keep draining so the server never blocks on its log
				break
			}
		}
		_ = cmd.Wait()
		close(exited)
		select {
		case seen <- errors.New("redis-server exited before it was ready"):
		default:
		}
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case err := <-seen:
		if err != nil {
			stop()
			return nil, fmt.Errorf("%w; its log:\n%s", err, tail.String())
		}
	case <-timer.C:
		stop()
		return nil, fmt.Errorf("redis-server on port %d not ready after %s", port, startTimeout)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	return &Server{URL: "redis://" + addr + "/0", Addr: addr, Started: true, stop: stop}, nil
}

// Prefix returns a fresh key prefix, so tests sharing a Redis never see each
// other's keys. On the Redis of $TASKSBRIDGE_REDIS_URL the test's keys are
// deleted when it ends (only keys under its prefix: nothing is flushed); a
// server of this package's own goes away with all its keys.
func (s *Server) Prefix(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "tbtest-" + hex.EncodeToString(b[:])
	if !s.Started {
		t.Cleanup(func() {
			if err := deleteKeys(s.URL, prefix+":*"); err != nil {
				t.Logf("redistest: could not delete the test's keys under %s: %v", prefix, err)
			}
		})
	}
	return prefix
}

func deleteKeys(url, pattern string) error {
	o, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	c := redis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.Scan(ctx, 0, pattern, 1000).Iterator()
	for it.Next(ctx) {
		if err := c.Del(ctx, it.Val()).Err(); err != nil {
			return err
		}
	}
	return it.Err()
}
