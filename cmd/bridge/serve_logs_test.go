package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
)

type syncBuffer = syncbuf.Buffer

// `bridge serve --log-format json --audit-log PATH`: every log line is a
// JSON object, the upstream's reachability is logged, and a legacy client's
// task is audited (L-79, L-80) in a 0600 file, one JSON line per action.
func TestServeJSONLogsAndAuditLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	stderr := &syncBuffer{}
	pr, pw := io.Pipe()
	app := newApp()
	app.Writer, app.ErrWriter = pw, stderr
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		err := app.RunContext(runCtx, []string{"bridge", "serve", "--listen", "127.0.0.1:0", "--upstream", startDemoUpstream(t),
			"--data-dir", t.TempDir(), "--log-format", "json", "--audit-log", auditPath})
		pw.Close()
		done <- err
	}()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	url := awaitLine(ctx, t, lines, done, "bridge: ")
	cs, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	// slow_task runs as an upstream task; the bridge polls it for this
	// plain call.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow_task", Arguments: map[string]any{"ms": 10, "text": "audited"}}); err != nil {
		t.Fatalf("slow_task: %v", err)
	}
	sid := cs.ID()
	cs.Close()
	// A request the bridge refuses is logged for the operator.
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}

	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		msgs = append(msgs, rec["msg"].(string))
	}
	for _, want := range []string{"upstream reachable", "refused a client request"} {
		if !strings.Contains(strings.Join(msgs, "\n"), want) {
			t.Errorf("no %q record in %q", want, msgs)
		}
	}

	st, err := os.Stat(auditPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("audit log mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
	b, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Action, Session, Task, Outcome, Era string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if e.Session != sid || e.Task == "" || e.Era != "legacy" || e.Outcome == "" {
			t.Errorf("audit record %s: want session %s, a task id and an outcome", line, sid)
		}
		actions[e.Action] = true
	}
	for _, a := range []string{"task.create", "task.result", "task.end"} {
		if !actions[a] {
			t.Errorf("no %s record in the audit log:\n%s", a, b)
		}
	}
}

func TestServeRejectsUnknownLogFormat(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, done := runApp(ctx, t, nil, "serve", "--upstream", "http://127.0.0.1:1/mcp", "--data-dir", t.TempDir(), "--log-format", "yaml")
	if err := <-done; err == nil || !strings.Contains(err.Error(), "--log-format \"yaml\": want text or json") {
		t.Errorf("serve --log-format yaml: %v", err)
	}
}
