package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
)

// startServe runs `bridge serve args...` and returns the /mcp URL, the
// other lines it printed before (e.g. "metrics: URL") and a stop function
// that checks it returned cleanly.
func startServe(ctx context.Context, t *testing.T, wantMetricsLine bool, args ...string) (mcpURL, metricsURL string, stop func()) {
	t.Helper()
	runCtx, cancel := context.WithCancel(ctx)
	lines, _, done := runApp(runCtx, t, nil, append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-level", "error"}, args...)...)
	var url, murl string
	for url == "" || (wantMetricsLine && murl == "") {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited: %v", <-done)
			}
			if rest, found := strings.CutPrefix(l, "bridge: "); found {
				url = rest
			}
			if rest, found := strings.CutPrefix(l, "metrics: "); found {
				murl = rest
			}
		case <-ctx.Done():
			t.Fatal("serve printed no endpoint")
		}
	}
	go func() {
		for range lines {
		}
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	}
	t.Cleanup(stop)
	return url, murl, stop
}

// `bridge serve --metrics-listen`: /metrics moves to its own listener, and
// `bridge rollout --metrics-url` over it gates the rollout: exit 4 while a
// legacy client uses the bridge, exit 0 for a bridge that saw only modern
// clients (through the real CLI).
func TestServeMetricsListenAndRolloutGate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	up := startDemoUpstream(t)

	url, murl, stop := startServe(ctx, t, true, "--upstream", up, "--metrics-listen", "127.0.0.1:0")
	if !strings.HasPrefix(murl, "http://127.0.0.1:") || !strings.HasSuffix(murl, "/metrics") {
		t.Fatalf("metrics URL %q", murl)
	}
	if s := httpStatus(t, strings.TrimSuffix(url, "/mcp")+"/metrics"); s != http.StatusNotFound {
		t.Errorf("/metrics on the main listener: %d, want 404 with --metrics-listen", s)
	}
	cs, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("legacy connect: %v", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	out, code, _ := runRolloutCmd(t, "--metrics-url", murl)
	if code != 4 || !strings.Contains(out, "serve-test") || !strings.Contains(out, "legacy") {
		t.Errorf("rollout with legacy traffic: exit %d\n%s", code, out)
	}
	stop()

	// A bridge whose only client is modern (passed through to the modern
	// upstream) can be removed.
	url, _, _ = startServe(ctx, t, false, "--upstream", up, "--upstream-era", "modern")
	mc, err := modernClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: demo.ProtocolVersion})
	if err != nil {
		t.Fatalf("modern connect: %v", err)
	}
	if _, err := mc.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "y"}}); err != nil {
		t.Fatal(err)
	}
	mc.Close()
	out, code, err = runRolloutCmd(t, "--metrics-url", strings.TrimSuffix(url, "/mcp")+"/metrics")
	if code != 0 || err != nil || !strings.Contains(out, "demo-cmd-test") || !strings.Contains(out, "can be removed") {
		t.Errorf("rollout with modern traffic only: exit %d %v\n%s", code, err, out)
	}
}

// `bridge serve` in front of a legacy upstream: a modern client gets the
// modern face, a legacy client is passed through, on the same listener.
func TestServeLegacyUpstream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	up, stopUp, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer stopUp()
	url, _, stop := startServe(ctx, t, false, "--upstream", up)

	mc, err := modernClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: demo.ProtocolVersion})
	if err != nil {
		t.Fatalf("modern connect: %v", err)
	}
	r, err := mc.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "modern via face"}})
	if err != nil || len(r.Content) == 0 {
		t.Fatalf("modern echo: %v %v", r, err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "modern via face" {
		t.Errorf("modern echo: %+v", r.Content)
	}
	mc.Close()

	lc, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("legacy connect: %v", err)
	}
	if got := lc.InitializeResult().ServerInfo.Name; got != "tasksbridge-legacy-fixture" {
		t.Errorf("legacy client reached %q, want the upstream itself (passthrough)", got)
	}
	lc.Close()
	stop()
}

func TestServeRejectsBadEra(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lines, _, done := runApp(ctx, t, nil, "serve", "--upstream", "http://127.0.0.1:1/mcp", "--upstream-era", "future", "--data-dir", t.TempDir())
	go func() {
		for range lines {
		}
	}()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "upstream-era") {
		t.Errorf("serve --upstream-era future: %v", err)
	}
}
