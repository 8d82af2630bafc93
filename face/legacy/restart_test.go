package legacyface_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Environment of the re-executed test binary that runs a bridge (the
// restart test kills it with SIGKILL).
const (
	envChild    = "TASKSBRIDGE_FACE_TEST_CHILD"
	envUpstream = "TASKSBRIDGE_FACE_TEST_UPSTREAM"
	envDataDir  = "TASKSBRIDGE_FACE_TEST_DATA"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envChild) {
	case "1":
		os.Exit(runChild())
	case "upstream":
		// A stdio modern upstream for the --upstream-command test.
		srv := demo.New(demo.Options{PollInterval: 20 * time.Millisecond})
		if err := srv.ServeIO(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild serves a bridge on a loopback port until killed, printing
// "listening <addr>" once it accepts connections.
func runChild() int {
	b, err := legacyface.New(legacyface.Config{
		Upstream: os.Getenv(envUpstream),
		DataDir:  os.Getenv(envDataDir),
		Logger:   quietLogger(),
		Watch:    fastWatch(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	fmt.Printf("listening %s\n", ln.Addr())
	if err := http.Serve(ln, b.Mux()); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
	}
	return 1
}

// startChild runs a bridge process on dataDir and returns its /mcp URL.
func startChild(t *testing.T, upstreamURL, dataDir string) (url string, kill func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=1", envUpstream+"="+upstreamURL, envDataDir+"="+dataDir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	kill = func() {
		if !killed {
			killed = true
			_ = cmd.Process.Kill() // SIGKILL: no shutdown code runs
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		kill()
		t.Fatalf("child did not start: %v; stderr: %s", err, stderr.String())
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("child said %q", line)
	}
	return "http://" + addr + "/mcp", kill
}

// After kill -9 and a restart on the same data directory, a legacy
// client that keeps its Mcp-Session-Id continues without re-initializing:
// tasks/list, tasks/get and tasks/result (including an input_required task,
// whose watcher restarts lazily) work on its earlier tasks, and the session's
// log level still reaches the upstream.
func TestRestartWithoutLoss(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	up := startUpstream(t, demo.Options{})
	dir := t.TempDir()

	url1, kill1 := startChild(t, up.url, dir)
	c := newRawClient(t, url1)
	c.authz = "" // no credentials: the session is the scope, and it survives too
	c.initialize(ctx, nil)
	if r := c.call(ctx, "logging/setLevel", map[string]any{"level": "error"}); r.Err != nil {
		t.Fatalf("setLevel: %s", r.Envelope)
	}
	slow := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "after restart"}, "task": map[string]any{}}))
	ask := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Still there?"}, "task": map[string]any{}}))
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": ask})); s != "input_required" {
		t.Fatalf("elicit task: %s", s)
	}
	sid := c.sessionID()
	kill1()

	url2, kill2 := startChild(t, up.url, dir)
	defer kill2()
	c.url = url2 // same client, same Mcp-Session-Id, no initialize
	if c.sessionID() != sid {
		t.Fatal("session id changed")
	}
	l := c.call(ctx, "tasks/list", nil)
	if l.Err != nil || !bytes.Contains(l.Result, []byte(slow)) || !bytes.Contains(l.Result, []byte(ask)) {
		t.Fatalf("tasks/list after restart: HTTP %d %s %s", l.Status, l.Envelope, l.Body)
	}
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": slow})); s != "working" {
		t.Errorf("slow task after restart: %s", s)
	}
	var slowUp string
	for _, id := range up.srv.TaskIDs() {
		if up.srv.Status(id) == "working" {
			slowUp = id
		}
	}
	if slowUp == "" || !up.srv.CompleteNow(slowUp) {
		t.Fatal("cannot complete the upstream slow task")
	}
	r := c.call(ctx, "tasks/result", map[string]any{"taskId": slow})
	if r.Err != nil || !bytes.Contains(r.Result, []byte(`"after restart"`)) || !bytes.Contains(r.Result, []byte(slow)) {
		t.Errorf("tasks/result after restart: %s", r.Envelope)
	}
	c.setHandler(func(method string, params json.RawMessage) (any, *rpc.Error) {
		return map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}, nil
	})
	r = c.call(ctx, "tasks/result", map[string]any{"taskId": ask})
	if r.Err != nil || !bytes.Contains(r.Result, []byte(`"yes"`)) {
		t.Errorf("input_required task after restart: %s", r.Envelope)
	}
	if len(r.Requests) != 1 || !bytes.Contains(r.Requests[0], []byte(ask)) {
		t.Errorf("elicitation after restart: %s", r.Requests)
	}
	// The rehydrated session still carries the client's log level and
	// capabilities upstream.
	c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	calls := up.rec.byMethod("tools/call")
	last := calls[len(calls)-1].Body
	if !bytes.Contains(last, []byte(`"io.modelcontextprotocol/logLevel":"error"`)) || !bytes.Contains(last, []byte(`"raw-legacy-client"`)) {
		t.Errorf("after restart the upstream call lacks the session's log level or clientInfo: %s", last)
	}
	// A session that never existed is still 404.
	other := newRawClient(t, url2)
	other.setSession("never-existed")
	if r := other.call(ctx, "tasks/list", nil); r.Status != http.StatusNotFound {
		t.Errorf("unknown session after restart: HTTP %d", r.Status)
	}
	c.checkReceived(t)
}
