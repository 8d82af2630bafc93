//go:build unix

package authe2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// Wrapper mode: the conformance harness runs `--command CMD` with the URL of
// its protected MCP server appended. With wrapEnv set, this test binary is
// that CMD: it starts `bridge serve --upstream <that URL> --upstream-era auto`
// (wrapBridgeEnv names the binary), runs the client (wrapClientEnv) with the
// bridge's URL instead, and exits with the client's status. The bridge's log
// goes to stderr, which the harness keeps in the scenario's stderr.txt.
const (
	wrapEnv       = "TASKSBRIDGE_AUTHE2E_WRAP"
	wrapBridgeEnv = "TASKSBRIDGE_AUTHE2E_BRIDGE"
	wrapClientEnv = "TASKSBRIDGE_AUTHE2E_CLIENT"
	wrapDeadline  = 45 * time.Second
)

func TestMain(m *testing.M) {
	if os.Getenv(wrapEnv) == "1" {
		os.Exit(wrap(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "tasksbridge-authe2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func wrap(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "wrapper: no upstream URL argument")
		return 2
	}
	upstream := args[len(args)-1]
	bin, client := os.Getenv(wrapBridgeEnv), os.Getenv(wrapClientEnv)
	if bin == "" || client == "" {
		fmt.Fprintf(os.Stderr, "wrapper: %s and %s must name the bridge and the client\n", wrapBridgeEnv, wrapClientEnv)
		return 2
	}
	dataDir, err := os.MkdirTemp("", "tasksbridge-authe2e-wrap-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "wrapper:", err)
		return 2
	}
	defer os.RemoveAll(dataDir)
	var b *bridgeProc
	for range 3 {
		addr, err := freeAddr()
		if err != nil {
			fmt.Fprintln(os.Stderr, "wrapper:", err)
			return 2
		}
		b, err = launchBridge(bin, addr, upstream, dataDir, prefixed{"bridge| "})
		if err == errAddrInUse {
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "wrapper:", err)
			return 2
		}
		break
	}
	if b == nil {
		fmt.Fprintln(os.Stderr, "wrapper: no free loopback port for the bridge")
		return 2
	}
	defer b.stop()
	fmt.Fprintf(os.Stderr, "wrapper: bridge %s in front of %s\n", b.URL, upstream)

	cmd := exec.Command(client, append(args[:len(args)-1:len(args)-1], b.URL)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "wrapper:", err)
		return 2
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The harness gives a client 30 s; nothing may outlive a killed run.
	deadline := time.NewTimer(wrapDeadline)
	defer deadline.Stop()
	select {
	case <-done:
	case s := <-sig:
		_ = cmd.Process.Signal(s)
		<-done
	case <-deadline.C:
		fmt.Fprintf(os.Stderr, "wrapper: the client still runs after %v; killing it\n", wrapDeadline)
		_ = cmd.Process.Kill()
		<-done
	}
	return cmd.ProcessState.ExitCode()
}

// prefixed writes each line to stderr with a prefix.
type prefixed struct{ prefix string }

func (p prefixed) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			_, _ = os.Stderr.WriteString(p.prefix + line)
		}
	}
	return len(b), nil
}

// httpOf returns the "http" exchanges of an oauth-legacy-client.mjs report.
func httpOf(rep *peers.Report) string {
	var r struct {
		HTTP []json.RawMessage `json:"http"`
	}
	_ = json.Unmarshal([]byte(rep.Raw), &r)
	lines := make([]string, 0, len(r.HTTP))
	for _, h := range r.HTTP {
		lines = append(lines, "  "+string(h))
	}
	return "\n" + strings.Join(lines, "\n")
}
