package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/bench/cluster"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
)

// bridgeChild is a `bridge serve` child process.
type bridgeChild struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncbuf.Buffer
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

func startBridgeChild(ctx context.Context, t *testing.T, bin string, args ...string) *bridgeChild {
	t.Helper()
	b := &bridgeChild{cmd: exec.Command(bin, append([]string{"serve"}, args...)...), stderr: new(syncbuf.Buffer), exited: make(chan struct{})}
	b.cmd.Stderr = b.stderr
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "bridge: "); ok {
				urlc <- strings.TrimSpace(u)
			}
		}
		b.err = b.cmd.Wait()
		close(b.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-b.exited:
		default:
			_ = b.cmd.Process.Kill()
			<-b.exited
		}
	})
	select {
	case b.url = <-urlc:
	case <-b.exited:
		t.Fatalf("bridge exited before serving: %v\n%s", b.err, b.stderr.String())
	case <-ctx.Done():
		t.Fatalf("bridge printed no URL\n%s", b.stderr.String())
	}
	return b
}

// wait waits for the child to exit and returns its exit error.
func (b *bridgeChild) wait(ctx context.Context, t *testing.T) error {
	t.Helper()
	select {
	case <-b.exited:
		return b.err
	case <-ctx.Done():
		t.Fatalf("the bridge did not exit\n%s", b.stderr.String())
		return nil
	}
}

var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildBridgeOnce builds the bridge once for the tests of this package that
// run it as a child process.
func buildBridgeOnce(ctx context.Context, t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "tasksbridge-lifecycle-")
		if built.err == nil {
			built.bin, built.err = cluster.BuildBridge(ctx, built.dir, false)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// A second SIGTERM during the drain stops at once: here within a bound far
// below the shutdown delay, with the "stopped" line saying what cut it.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bridge")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := buildBridgeOnce(ctx, t)
	br := startBridgeChild(ctx, t, bin, "--upstream", startDemoUpstream(t), "--upstream-era", "modern", "--listen", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--shutdown-delay", "10m", "--shutdown-timeout", "10m")
	base := strings.TrimSuffix(br.url, "/mcp")
	if err := br.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Draining: /readyz says so (the listener is open).
	pollUntil(ctx, t, "/readyz 503 draining", func() bool {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusServiceUnavailable
	})
	if err := br.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := br.wait(ctx, t); err != nil {
		t.Errorf("exit after the second signal: %v", err)
	}
	logs := br.stderr.String()
	if !strings.Contains(logs, "second signal") || strings.Count(logs, "msg=stopped") != 1 || !strings.Contains(logs, `cut="second signal"`) {
		t.Errorf("log after two signals:\n%s", logs)
	}
}

// Acceptance: SIGTERM under load. A real `bridge serve` (built here) in
// front of the demo upstream, with 200 blocked tasks/result waits open, 50
// creates sent, and a client sending new requests continuously, gets
// SIGTERM: during --shutdown-delay no connection is refused (new requests
// get 503 + Retry-After + a JSON-RPC error with their id), every blocked
// wait is answered (handed back: call again), the bridge logs one "stopped"
// line and no warning, exits 0, and after a restart on the same data
// directory every create it acknowledged answers tasks/get.
func TestSIGTERMUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bridge and runs it under load")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := buildBridgeOnce(ctx, t)
	// The upstream's poll interval keeps 250 watched tasks light on a small
	// shared machine.
	up := demo.New(demo.Options{PollInterval: time.Second})
	upURL, stopUp, err := up.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close(); _ = stopUp() })
	data := t.TempDir()
	const delay = 3 * time.Second
	common := []string{"--upstream", upURL, "--upstream-era", "modern", "--listen", "127.0.0.1:0", "--data-dir", data,
		"--max-waiters-per-principal", "-1", "--max-tasks-per-principal", "-1", "--shutdown-timeout", "60s"}
	br := startBridgeChild(ctx, t, bin, append(common, "--shutdown-delay", delay.String())...)

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 300}}
	sessions := make([]*legacyHTTP, 10)
	for i := range sessions {
		sessions[i] = &legacyHTTP{url: br.url, hc: hc}
		if err := sessions[i].initialize(ctx, fmt.Sprintf("load-%d", i)); err != nil {
			t.Fatal(err)
		}
	}

	// 200 tasks, then a blocked wait on each.
	const waits, creates = 200, 50
	taskIDs := make([]string, waits)
	var wg sync.WaitGroup
	work := make(chan int)
	var createErr error
	var mu sync.Mutex
	for range 16 {
		wg.Go(func() {
			for i := range work {
				id, a, err := sessions[i%len(sessions)].createTask(ctx, i, 600000)
				mu.Lock()
				if id == "" && createErr == nil {
					createErr = fmt.Errorf("create %d: %v %+v", i, err, a)
				}
				taskIDs[i] = id
				mu.Unlock()
			}
		})
	}
	for i := range waits {
		work <- i
	}
	close(work)
	wg.Wait()
	if createErr != nil {
		t.Fatal(createErr)
	}
	waitAnswers := make([]rpcAnswer, waits)
	waitErrs := make([]error, waits)
	var opened, waitsDone sync.WaitGroup
	for i := range waits {
		opened.Add(1)
		waitsDone.Go(func() {
			var once sync.Once
			waitAnswers[i], waitErrs[i] = sessions[i%len(sessions)].do(ctx, 1000+i, "tasks/result", map[string]any{"taskId": taskIDs[i]}, func() { once.Do(opened.Done) })
			once.Do(opened.Done)
		})
	}
	opened.Wait()
	for i, err := range waitErrs {
		if err != nil {
			t.Fatalf("wait %d ended before SIGTERM: %v", i, err)
		}
	}

	// A client sending new requests continuously, until the listener is
	// closed.
	type probe struct {
		sent time.Time
		a    rpcAnswer
		id   string
		err  error
	}
	var probes []probe
	probeDone := make(chan struct{})
	prober := &legacyHTTP{url: br.url, hc: &http.Client{}}
	if err := prober.initialize(ctx, "prober"); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(probeDone)
		for n := 0; ctx.Err() == nil; n++ {
			id := fmt.Sprintf("probe-%d", n)
			p := probe{sent: time.Now(), id: `"` + id + `"`}
			p.a, p.err = prober.do(ctx, id, "tools/list", nil, nil)
			probes = append(probes, p)
			if p.err != nil {
				return // the listener closed (after the delay)
			}
			select {
			case <-br.exited:
				return
			default:
			}
		}
	}()

	// 50 clients creating tasks in a loop, so that creates are in flight
	// when SIGTERM arrives; each stops at its first refusal.
	type created struct {
		sess int
		id   string
	}
	var (
		madeMu   sync.Mutex
		made     []created
		createEr []error
	)
	var createsDone sync.WaitGroup
	for w := range creates {
		createsDone.Go(func() {
			s := w % len(sessions)
			for n := 0; ; n++ {
				id, a, err := sessions[s].createTask(ctx, fmt.Sprintf("create-%d-%d", w, n), 1)
				madeMu.Lock()
				switch {
				case err != nil:
					createEr = append(createEr, fmt.Errorf("create %d-%d: %w", w, n, err))
				case id != "":
					made = append(made, created{sess: s, id: id})
				case a.Status != http.StatusServiceUnavailable || a.Err == nil:
					createEr = append(createEr, fmt.Errorf("create %d-%d: HTTP %d %+v %q", w, n, a.Status, a.Err, a.Raw))
				}
				madeMu.Unlock()
				if err != nil || id == "" {
					return
				}
			}
		})
	}
	pollUntil(ctx, t, "creates flowing", func() bool {
		madeMu.Lock()
		defer madeMu.Unlock()
		return len(made) >= creates
	})
	sigAt := time.Now()
	if err := br.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	createsDone.Wait()
	waitsDone.Wait()
	if err := br.wait(ctx, t); err != nil {
		t.Errorf("after SIGTERM the bridge exited with %v, want 0", err)
	}
	<-probeDone
	logs := br.stderr.String()

	// No connection refused during the delay: only answers, and at least
	// one 503 with Retry-After and a JSON-RPC error naming the request.
	refused503 := 0
	for _, p := range probes {
		switch {
		case p.err != nil && p.sent.Before(sigAt.Add(delay)):
			t.Errorf("a request sent %v after SIGTERM (within --shutdown-delay %v) failed: %v", p.sent.Sub(sigAt), delay, p.err)
		case p.err != nil:
		case p.a.Status == http.StatusServiceUnavailable:
			refused503++
			if p.a.RetryAfter == "" || p.a.Err == nil || p.a.Err.Code != -32603 || string(p.a.ID) != p.id || !strings.Contains(p.a.Err.Message, "retry the request") {
				t.Errorf("503 while draining: Retry-After %q id %s error %+v: %q", p.a.RetryAfter, p.a.ID, p.a.Err, p.a.Raw)
			}
		case p.a.Status != http.StatusOK || p.a.Err != nil:
			t.Errorf("request %s: HTTP %d %+v", p.id, p.a.Status, p.a.Err)
		}
	}
	if refused503 == 0 {
		t.Errorf("no request got 503 while draining (%d requests)", len(probes))
	}
	// Every blocked wait answered: handed back, "call again".
	for i := range waits {
		a, err := waitAnswers[i], waitErrs[i]
		if err != nil || a.Err == nil || !strings.Contains(a.Err.Message, "call again") {
			t.Errorf("wait %d: %v HTTP %d %+v %s %q", i, err, a.Status, a.Err, a.Result, a.Raw)
		}
	}
	// Creates: acknowledged, or refused with 503 (never a transport error).
	for _, err := range createEr {
		t.Error(err)
	}
	acked := len(made)
	if n := strings.Count(logs, "msg=stopped"); n != 1 {
		t.Errorf("%d \"stopped\" lines, want 1", n)
	}
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			t.Errorf("a normal stop logged: %s", l)
		}
	}
	t.Logf("%d probes (%d refused with 503), %d creates acknowledged; log:\n%s", len(probes), refused503, acked, logs)

	// Restart on the same data directory: every acknowledged create is there.
	br2 := startBridgeChild(ctx, t, bin, append(common, "--shutdown-delay", "0s")...)
	for _, s := range sessions {
		s.url = br2.url
	}
	for i, c := range made {
		a, err := sessions[c.sess].do(ctx, 9000+i, "tasks/get", map[string]any{"taskId": c.id}, nil)
		if err != nil || a.Err != nil || !strings.Contains(string(a.Result), c.id) {
			t.Errorf("acknowledged task %d after the restart: %v %+v %s", i, err, a.Err, a.Result)
		}
	}
	if err := br2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := br2.wait(ctx, t); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("restarted bridge exited with %v\n%s", err, br2.stderr.String())
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
