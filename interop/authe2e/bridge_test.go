//go:build unix

// Package authe2e_test is the acceptance harness of the bridge's OAuth
// support, with real third-party peers only: a real authorization server
// (panva's oidc-provider, interop/oauth), protected upstreams that check
// bearer JWTs with go-oidc, the TypeScript SDK 1.32.2 and go-sdk v1.8.0 OAuth
// clients, and the conformance suite's client auth/* scenarios graded with
// go-sdk's own conformance client, directly and through a bridge built from
// this checkout.
package authe2e_test

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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
)

// bridgeAuthFlags are the request-edge flags of `bridge serve` for a bridge
// whose clients dial publicURL (its /mcp endpoint) and present JWTs issued
// by issuer for that URL (RFC 8707): the principal is the token's (iss, sub),
// so it survives token refresh. Adjust here if the edge's flags change.
//
// TASKSBRIDGE_AUTHE2E_EDGE_FLAGS=off leaves them out, to see what a bridge
// without the request edge does with the same traffic (diagnosis only).
func bridgeAuthFlags(publicURL, issuer string) []string {
	if os.Getenv("TASKSBRIDGE_AUTHE2E_EDGE_FLAGS") == "off" {
		return nil
	}
	return []string{"--principal", "jwt", "--oidc-issuer", issuer, "--public-url", publicURL}
}

// startTimeout bounds how long a bridge may take to print its URL.
const startTimeout = 60 * time.Second

var (
	binDir   string // set by TestMain: binaries built once per test binary
	buildMu  sync.Mutex
	builtBin = map[string]string{}
)

// goBuild builds pkg (a package path) into binDir once per test binary and
// returns the binary's path; race adds the race detector.
func goBuild(t testing.TB, name, pkg string, race bool) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := builtBin[name]; ok {
		return p
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is not on PATH: %v", err)
	}
	bin := filepath.Join(binDir, name)
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	args = append(args, pkg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	builtBin[name] = bin
	return bin
}

// bridgeBinary is ./cmd/bridge of this checkout (with -race under -race).
func bridgeBinary(t testing.TB) string {
	return goBuild(t, "bridge", "github.com/tasksbridge/tasksbridge/cmd/bridge", raceBuild)
}

// freeAddr returns a loopback address with a port that was free a moment
// ago: the bridge's public URL (the token audience) must be known before it
// starts. startBridge retries when the port was taken meanwhile.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// bridgeProc is a running `bridge serve`.
type bridgeProc struct {
	URL    string // the /mcp endpoint it printed
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	exited chan struct{}
}

// Stderr is the bridge's log so far.
func (b *bridgeProc) Stderr() string { return b.stderr.String() }

func (b *bridgeProc) stop() {
	select {
	case <-b.exited:
		return
	default:
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.exited
	}
}

var errAddrInUse = errors.New("address in use")

// launchBridge runs `bridge serve --listen addr --upstream upstream` plus
// flags with a fresh data dir and waits for its "bridge: URL" line.
func launchBridge(bin, addr, upstream, dataDir string, stderr io.Writer, flags ...string) (*bridgeProc, error) {
	args := append([]string{"serve", "--listen", addr, "--upstream", upstream, "--upstream-era", "auto",
		"--data-dir", dataDir, "--log-level", "debug",
		// Tests stop bridges between steps: no shutdown delay (a load
		// balancer has nothing to notice here).
		"--shutdown-delay", "0"}, flags...)
	b := &bridgeProc{cmd: exec.Command(bin, args...), stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	b.cmd.Env = append(os.Environ(), "GORACE=halt_on_error=1")
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if stderr != nil {
		b.cmd.Stderr = io.MultiWriter(b.stderr, stderr)
	} else {
		b.cmd.Stderr = b.stderr
	}
	out, err := b.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "bridge: "); ok {
				select {
				case urlc <- strings.TrimSpace(u):
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		_ = b.cmd.Wait()
		close(b.exited)
	}()
	select {
	case u := <-urlc:
		b.URL = u
		return b, nil
	case <-b.exited:
		if strings.Contains(b.stderr.String(), "address already in use") {
			return nil, errAddrInUse
		}
		return nil, fmt.Errorf("bridge serve %s exited (%v) before printing its URL:\n%s", strings.Join(args, " "), b.cmd.ProcessState, b.stderr.String())
	case <-time.After(startTimeout):
		b.stop()
		return nil, fmt.Errorf("bridge serve printed no URL within %v:\n%s", startTimeout, b.stderr.String())
	}
}

// startBridge runs a bridge from this checkout in front of upstream on a
// loopback port; flags(publicURL) gives the extra flags (for example
// bridgeAuthFlags). It is stopped on t.Cleanup; its log is shown when the
// test fails.
func startBridge(t testing.TB, upstream string, flags func(publicURL string) []string) *bridgeProc {
	t.Helper()
	bin := bridgeBinary(t)
	var lastErr error
	for range 3 {
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		var extra []string
		if flags != nil {
			extra = flags("http://" + addr + "/mcp")
		}
		b, err := launchBridge(bin, addr, upstream, t.TempDir(), nil, extra...)
		if errors.Is(err, errAddrInUse) {
			lastErr = err
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			b.stop()
			if t.Failed() {
				t.Logf("bridge log:\n%s", b.Stderr())
			}
		})
		if want := "http://" + addr + "/mcp"; b.URL != want {
			t.Fatalf("bridge printed %s, want %s", b.URL, want)
		}
		return b
	}
	t.Fatalf("no free loopback port for the bridge: %v", lastErr)
	return nil
}
