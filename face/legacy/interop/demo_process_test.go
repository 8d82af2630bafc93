//go:build unix

package interop_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// startTimeout bounds how long `bridge demo` may take to print its URLs
// (startup is fast; this only absorbs a very busy machine).
const startTimeout = 60 * time.Second

// TestBridgeDemoProcessTSClient runs "bridge demo, then the TypeScript
// legacy client against it" as a user would: the real `bridge` binary
// runs `bridge demo` on an ephemeral loopback port with a fresh data dir,
// the TypeScript SDK 1.32.2 legacy client passes every step (create/poll/
// result, stream, plain, list, cancel, failure, isError, elicitation and
// sampling on tasks/result) against the printed bridge URL, and SIGTERM
// stops the process cleanly. Under -race the binary is built with the race
// detector too, halting on the first race.
func TestBridgeDemoProcessTSClient(t *testing.T) {
	t.Parallel()
	// Fail early (or skip) when the client is missing, before the build.
	peers.TSScript(t, "legacy-client.mjs")
	bin := buildBridge(t)
	dataDir := t.TempDir()

	p := startDemo(t, bin, "demo", "--listen", "127.0.0.1:0", "--data-dir", dataDir,
		"--poll-interval", pollInterval.String())
	for _, u := range []string{p.upstream, p.bridge} {
		if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/mcp") {
			t.Fatalf("bridge demo printed %q, want a loopback /mcp endpoint\nstdout:\n%s", u, p.stdout())
		}
	}
	if p.upstream == p.bridge {
		t.Fatalf("bridge demo printed the same URL for the upstream and the bridge: %s", p.bridge)
	}

	rep := peers.RunTSClient(t, p.bridge, peers.ClientOptions{Args: tsArgs(), Timeout: clientTimeout})
	checkTSReport(t, rep)

	// Graceful stop: SIGTERM, then exit status 0 within the bound.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
		t.Fatalf("bridge demo still running 30 s after SIGTERM\nstderr:\n%s", p.stderr.String())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("bridge demo exited %d after SIGTERM, want 0\nstderr:\n%s", code, p.stderr.String())
	}
	for _, bad := range []string{"panic:", "DATA RACE", "level=ERROR"} {
		if strings.Contains(p.stderr.String(), bad) {
			t.Errorf("bridge demo stderr has %q:\n%s", bad, p.stderr.String())
		}
	}
	// The bridge kept its index in the data dir it was given.
	if entries, err := os.ReadDir(dataDir); err != nil || len(entries) == 0 {
		t.Errorf("data dir %s is empty after the run (%v): the bridge did not use --data-dir", dataDir, err)
	}
}

// buildBridge builds ./cmd/bridge into a temporary directory, with the race
// detector when this test runs under it.
func buildBridge(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "bridge")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	args = append(args, "github.com/tasksbridge/tasksbridge/cmd/bridge")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// syncBuffer is a concurrency-safe output capture.
type syncBuffer = syncbuf.Buffer

// demoProcess is a running `bridge demo`.
type demoProcess struct {
	cmd              *exec.Cmd
	upstream, bridge string // the printed URLs
	out, stderr      *syncBuffer
	exited           chan struct{} // closed once the process was reaped
}

func (p *demoProcess) stdout() string { return p.out.String() }

// startDemo runs bin with args and waits for its "upstream: URL" and
// "bridge: URL" lines. The process is killed on t.Cleanup if still running.
func startDemo(t *testing.T, bin string, args ...string) *demoProcess {
	t.Helper()
	p := &demoProcess{cmd: exec.Command(bin, args...), out: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	// halt_on_error: a race in the child ends it with a report on stderr.
	p.cmd.Env = append(os.Environ(), "GORACE=halt_on_error=1")
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("stdout pipe: %v", err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	type urls struct{ upstream, bridge string }
	found := make(chan urls, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		var u urls
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			_, _ = p.out.Write([]byte(line + "\n"))
			if v, ok := strings.CutPrefix(line, "upstream: "); ok && u.upstream == "" {
				u.upstream = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "bridge: "); ok && u.bridge == "" {
				u.bridge = strings.TrimSpace(v)
				found <- u
			}
		}
	}()
	go func() {
		<-scanned // Wait closes the pipe: read it to the end first
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("bridge demo stderr:\n%s", p.stderr.String())
		}
	})

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case u := <-found:
		p.upstream, p.bridge = u.upstream, u.bridge
	case <-p.exited:
		t.Fatalf("bridge demo exited (%v) before printing its URLs\nstdout:\n%s\nstderr:\n%s", p.cmd.ProcessState, p.stdout(), p.stderr.String())
	case <-timer.C:
		t.Fatalf("bridge demo printed no bridge URL within %v\nstdout:\n%s\nstderr:\n%s", startTimeout, p.stdout(), p.stderr.String())
	}
	if p.upstream == "" {
		t.Fatalf("bridge demo printed no upstream URL before the bridge URL\nstdout:\n%s", p.stdout())
	}
	return p
}
