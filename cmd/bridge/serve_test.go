package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

func startDemoUpstream(t *testing.T) string {
	t.Helper()
	srv := demo.New(demo.Options{PollInterval: 20 * time.Millisecond})
	url, stop, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		_ = stop()
	})
	return url
}

// awaitLine returns the rest of the first stdout line with prefix.
func awaitLine(ctx context.Context, t *testing.T, lines <-chan string, done <-chan error, prefix string) string {
	t.Helper()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("command exited before printing %q: %v", prefix, <-done)
			}
			if rest, found := strings.CutPrefix(l, prefix); found {
				go func() {
					for range lines {
					}
				}()
				return rest
			}
		case <-ctx.Done():
			t.Fatalf("no %q line", prefix)
		}
	}
}

func legacyClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "1"}, nil)
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// `bridge serve` with the upstream from the environment: prints its
// endpoint, serves a 2025-11-25 client, answers /healthz and /readyz on the
// same listener, and stops cleanly when its context ends (as on SIGINT).
func TestServeHTTPFromEnv(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t.Setenv("TASKSBRIDGE_UPSTREAM", startDemoUpstream(t))
	t.Setenv("TASKSBRIDGE_DATA_DIR", t.TempDir())
	runCtx, stop := context.WithCancel(ctx)
	lines, _, done := runApp(runCtx, t, nil, "serve", "--listen", "127.0.0.1:0", "--log-level", "error")
	url := awaitLine(ctx, t, lines, done, "bridge: ")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("endpoint %q", url)
	}
	base := strings.TrimSuffix(url, "/mcp")
	if s := httpStatus(t, base+"/healthz"); s != http.StatusOK {
		t.Errorf("/healthz %d", s)
	}
	if s := httpStatus(t, base+"/readyz"); s != http.StatusOK {
		t.Errorf("/readyz %d", s)
	}
	cs, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "served"}})
	if err != nil {
		t.Fatalf("echo: %v", err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "served" {
		t.Errorf("echo: %+v", r.Content)
	}
	cs.Close()
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-ctx.Done():
		t.Fatal("serve did not stop")
	}
}

// `bridge serve --stdio` serves one legacy client on stdin/stdout and
// returns when the client closes its input.
func TestServeStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	_, out, done := runApp(ctx, t, inR, "serve", "--stdio", "--upstream", startDemoUpstream(t), "--data-dir", t.TempDir())
	cs, err := legacyClient().Connect(ctx, &mcp.IOTransport{Reader: out, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect over stdio: %v", err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve --stdio returned %v", err)
		}
	case <-ctx.Done():
		t.Fatal("serve --stdio did not return after EOF")
	}
}

func TestServeNeedsOneUpstream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.Setenv("TASKSBRIDGE_UPSTREAM", "")
	for _, args := range [][]string{
		{"serve", "--data-dir", t.TempDir()},
		{"serve", "--upstream", "http://127.0.0.1:1/mcp", "--upstream-command", "x", "--data-dir", t.TempDir()},
		{"serve", "--upstream", "not-a-url", "--data-dir", t.TempDir()},
	} {
		lines, _, done := runApp(ctx, t, nil, args...)
		go func() {
			for range lines {
			}
		}()
		if err := <-done; err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
}

func TestServeHelp(t *testing.T) {
	app := newApp()
	var out bytes.Buffer
	app.Writer = &out
	app.ErrWriter = io.Discard
	if err := app.Run([]string{"bridge", "serve", "--help"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--upstream", "--upstream-command", "--listen", "--data-dir", "--stdio", "TASKSBRIDGE_UPSTREAM",
		"TASKSBRIDGE_LISTEN", "TASKSBRIDGE_DATA_DIR", "/healthz", "/readyz", "127.0.0.1:8080", "./tasksbridge-data",
		"--upstream-era", "TASKSBRIDGE_UPSTREAM_ERA", "--metrics-listen", "TASKSBRIDGE_METRICS_LISTEN", "/metrics",
		"legacy client -> modern upstream", "modern client -> legacy upstream", "legacy client -> legacy upstream",
		"modern client -> modern upstream", "-32022", "--session-cache", "TASKSBRIDGE_SESSION_CACHE",
		"--shutdown-delay", "TASKSBRIDGE_SHUTDOWN_DELAY", "--read-timeout", "TASKSBRIDGE_READ_TIMEOUT", "--idle-timeout",
		"TASKSBRIDGE_IDLE_TIMEOUT", "not as unreadiness", "second SIGINT or SIGTERM stops at once"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}

// `bridge demo` runs the embedded upstream and the bridge in front of it.
func TestDemoRunsBridge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	lines, _, done := runApp(runCtx, t, nil, "demo", "--listen", "127.0.0.1:0")
	url := awaitLine(ctx, t, lines, done, "bridge: ")
	cs, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "slow_task") {
		t.Errorf("tools %v", names)
	}
	cs.Close()
	stop()
	if err := <-done; err != nil {
		t.Fatalf("demo returned %v", err)
	}
}

// TestServeUpstreamHelperProcess is not a test: re-executed by
// TestServeUpstreamCommand, it serves the embedded modern server on
// stdin/stdout through the real CLI (`bridge demo --upstream-only --stdio`).
func TestServeUpstreamHelperProcess(t *testing.T) {
	if os.Getenv("TASKSBRIDGE_SERVE_TEST_UPSTREAM") != "1" {
		t.Skip("helper process for TestServeUpstreamCommand")
	}
	app := newApp()
	app.ErrWriter = io.Discard
	if err := app.Run([]string{"bridge", "demo", "--upstream-only", "--stdio", "--poll-interval", "20ms"}); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// `bridge serve --upstream-command "prog args"` talks to a stdio upstream.
func TestServeUpstreamCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TASKSBRIDGE_SERVE_TEST_UPSTREAM", "1")
	runCtx, stop := context.WithCancel(ctx)
	lines, _, done := runApp(runCtx, t, nil, "serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-level", "error",
		"--upstream-command", "'"+exe+"' -test.run=^TestServeUpstreamHelperProcess$")
	url := awaitLine(ctx, t, lines, done, "bridge: ")
	cs, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "via a pipe"}})
	if err != nil {
		t.Fatalf("echo: %v", err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "via a pipe" {
		t.Errorf("echo: %+v", r.Content)
	}
	// A task tool called without a task is polled by the bridge.
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow_task", Arguments: map[string]any{"ms": 20, "text": "polled"}})
	if err != nil {
		t.Fatalf("slow_task: %v", err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "polled" {
		t.Errorf("slow_task: %+v", r.Content)
	}
	cs.Close()
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
}

// `bridge serve --require-auth` in front of a legacy server refuses a
// 2026-07-28 request without an Authorization header with 401, and serves
// one that carries a credential (M-65).
func TestServeRequireAuth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx := legacyfixture.New(legacyfixture.Options{PollInterval: 20 * time.Millisecond})
	upURL, stopUp, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopUp)
	runCtx, stop := context.WithCancel(ctx)
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	dataDir := t.TempDir()
	lines, _, done := runApp(runCtx, t, nil, "serve", "--upstream", upURL, "--upstream-era", "legacy",
		"--require-auth", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "error", "--audit-log", auditPath)
	url := awaitLine(ctx, t, lines, done, "bridge: ")
	post := func(auth, method, params string) int {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if method == "tools/call" {
			req.Header.Set("Mcp-Name", "slow_required")
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post("", "server/discover", ""); s != http.StatusUnauthorized {
		t.Errorf("modern request without Authorization: HTTP %d, want 401", s)
	}
	if s := post("Bearer alice", "server/discover", ""); s != http.StatusOK {
		t.Errorf("modern request with Authorization: HTTP %d, want 200", s)
	}
	// --audit-log records modern clients too (L-79), by principal hash (L-80).
	if s := post("Bearer alice", "tools/call", `"name":"slow_required","arguments":{"ms":10,"text":"x"},`); s != http.StatusOK {
		t.Errorf("modern task tools/call: HTTP %d, want 200", s)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	b, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	// The principal is keyed with the store's principal key.
	ro, err := sessionmap.OpenBadger(dataDir, sessionmap.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	key := ro.PrincipalKey()
	_ = ro.Close()
	want := `"action":"task.create","era":"modern","principal":"` +
		sessionmap.KeyPrincipal(key, sessionmap.PrincipalFromAuthorization("Bearer alice")) + `"`
	if !strings.Contains(string(b), want) || strings.Contains(string(b), "alice") {
		t.Errorf("audit log %q; want a modern task.create by the principal hash, never the token", b)
	}
}

// --session-cache 0 would reload every session on every request: refused at
// start, naming the flag and what to use instead.
func TestServeRefusesZeroSessionCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lines, _, done := runApp(ctx, t, nil, "serve", "--upstream", "http://127.0.0.1:1/mcp", "--session-cache", "0", "--data-dir", t.TempDir())
	go func() {
		for range lines {
		}
	}()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "--session-cache 0") || !strings.Contains(err.Error(), "-1") {
		t.Errorf("serve --session-cache 0: %v", err)
	}
}
