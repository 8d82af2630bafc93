package peers

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
)

// StartTimeout bounds how long a server may take to print its URL.
const StartTimeout = 60 * time.Second

// stopGrace is how long a stopped server gets between SIGTERM and SIGKILL.
const stopGrace = 5 * time.Second

// maxCapture bounds the captured output of one process.
const maxCapture = 1 << 20

// buffer is a size-bounded, concurrency-safe output capture.
type buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := maxCapture - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Server is a running peer server started by a test.
type Server struct {
	// URL is the MCP endpoint the server printed, http://127.0.0.1:PORT/mcp.
	URL string
	// Pid is the server's process id (also its process group id).
	Pid int

	name   string
	cmd    *exec.Cmd
	stdin  io.Closer
	stderr *buffer
	done   chan struct{} // closed when the process was reaped
	stop   sync.Once
}

// Stderr returns what the server wrote to stderr so far.
func (s *Server) Stderr() string { return s.stderr.String() }

// Stop ends the server and its process group: stdin is closed (servers started
// here exit on that), then SIGTERM, then SIGKILL after a grace period. It is
// registered with t.Cleanup and safe to call more than once.
func (s *Server) Stop() {
	s.stop.Do(func() {
		_ = s.stdin.Close()
		select {
		case <-s.done:
			return // already exited and reaped: its pid may be reused, signal nothing
		default:
		}
		signalGroup(s.cmd, sigTerm)
		timer := time.NewTimer(stopGrace)
		defer timer.Stop()
		select {
		case <-s.done:
		case <-timer.C:
			signalGroup(s.cmd, sigKill)
			<-s.done
		}
	})
}

var listeningLine = regexp.MustCompile(`^listening (http://127\.0\.0\.1:\d+/\S*)\s*$`)

// startServer runs cmd in its own process group with a stdin pipe held open,
// waits for its "listening URL" stdout line and stops it on t.Cleanup.
func startServer(t testing.TB, name string, cmd *exec.Cmd) *Server {
	t.Helper()
	s := &Server{name: name, cmd: cmd, stderr: &buffer{}, done: make(chan struct{})}
	setProcessGroup(cmd)
	cmd.Stderr = s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("%s: stdin pipe: %v", name, err)
	}
	s.stdin = stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("%s: stdout pipe: %v", name, err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: start %v: %v", name, cmd.Args, err)
	}
	s.Pid = cmd.Process.Pid

	urlc := make(chan string, 1)
	var rest buffer
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			if m := listeningLine.FindStringSubmatch(sc.Text()); m != nil && !found {
				found = true
				urlc <- m[1]
				continue
			}
			_, _ = rest.Write(append(sc.Bytes(), '\n'))
		}
		// Keep draining whatever is left so the child never blocks on stdout.
		_, _ = io.Copy(&rest, stdout)
		close(urlc)
	}()
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("%s (pid %d) stderr:\n%s", name, s.Pid, s.Stderr())
		}
	})

	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case u, ok := <-urlc:
		if !ok {
			<-s.done
			t.Fatalf("%s exited before printing its URL (%v)\nstdout:\n%s\nstderr:\n%s", name, cmd.ProcessState, rest.String(), s.Stderr())
		}
		s.URL = u
	case <-timer.C:
		t.Fatalf("%s printed no URL within %v\nstderr:\n%s", name, StartTimeout, s.Stderr())
	}
	return s
}

// TSServerOptions configures legacy-server.mjs.
type TSServerOptions struct {
	// PollMs is the pollInterval every task advertises (default 50 here; the
	// script's own default is 100).
	PollMs int
	// TimeScale multiplies every tool duration (0 means 1).
	TimeScale float64
	// Log makes the server log each request to stderr.
	Log bool
	// Compose is the shape of test_tool_with_task: "ask-first" (default:
	// elicits on the tools/call stream before the task exists) or
	// "task-first" (creates its task, then elicits on the tasks/result side
	// channel before answering the tools/call).
	Compose string
	// Env adds environment variables (KEY=VALUE).
	Env []string
}

// StartTSServer starts interop/ts/legacy-server.mjs (TypeScript SDK 1.32.2
// legacy fixture, tools of interop/README.md "Tools") on an ephemeral 127.0.0.1
// port. It is stopped on t.Cleanup.
func StartTSServer(t testing.TB, o TSServerOptions) *Server {
	t.Helper()
	node := Node(t)
	script := TSScript(t, "legacy-server.mjs")
	if o.PollMs == 0 {
		o.PollMs = 50
	}
	if o.TimeScale == 0 {
		o.TimeScale = 1
	}
	args := []string{script, "--port", "0", "--exit-on-stdin-close",
		"--poll-ms", strconv.Itoa(o.PollMs), "--time-scale", strconv.FormatFloat(o.TimeScale, 'g', -1, 64)}
	if o.Log {
		args = append(args, "--log")
	}
	if o.Compose != "" {
		args = append(args, "--compose", o.Compose)
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = Dir(t) + "/ts"
	cmd.Env = append(cmd.Environ(), o.Env...)
	return startServer(t, "ts legacy-server", cmd)
}

// MCPGoServerOptions configures the mcp-go fixture server.
type MCPGoServerOptions struct {
	// TimeScale multiplies every tool duration (0 means 1).
	TimeScale float64
}

// StartMCPGoServer starts interop/bin/mcpgo-server (mcp-go v1.2.1 legacy
// fixture: echo, slow_task hybrid, slow_required, fail_task) on an ephemeral
// 127.0.0.1 port. It is stopped on t.Cleanup.
func StartMCPGoServer(t testing.TB, o MCPGoServerOptions) *Server {
	t.Helper()
	bin := MCPGoBinary(t, "server")
	if o.TimeScale == 0 {
		o.TimeScale = 1
	}
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-exit-on-stdin-close",
		"-time-scale", strconv.FormatFloat(o.TimeScale, 'g', -1, 64))
	return startServer(t, "mcp-go server", cmd)
}

// runOnce runs cmd to completion in its own process group, killing the group
// when ctx ends, and returns its stdout and stderr.
func runOnce(ctx context.Context, cmd *exec.Cmd) (stdout, stderr string, err error) {
	var out, errb buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return "", "", fmt.Errorf("start %v: %w", cmd.Args, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		signalGroup(cmd, sigKill)
		<-done
		err = fmt.Errorf("%v: %w", cmd.Args[0], ctx.Err())
	}
	return out.String(), errb.String(), err
}
