package router_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// switchable is an upstream whose implementation a test swaps, as when a
// server is upgraded in place (same URL, another era).
type switchable struct {
	h    atomic.Pointer[http.Handler]
	gets chan struct{} // a GET (standalone SSE stream) arrived
	url  string
}

func newSwitchable(t *testing.T, h http.Handler) *switchable {
	t.Helper()
	s := &switchable{gets: make(chan struct{}, 16)}
	s.set(h)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			select {
			case s.gets <- struct{}{}:
			default:
			}
		}
		(*s.h.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	s.url = hs.URL + "/mcp"
	return s
}

func (s *switchable) set(h http.Handler) { s.h.Store(&h) }

func legacyHandler(t *testing.T) http.Handler {
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	t.Cleanup(fx.DropSessions)
	return fx.Handler()
}

func modernHandler(t *testing.T) http.Handler {
	srv := demo.New(demo.Options{PollInterval: 20 * time.Millisecond})
	t.Cleanup(srv.Close)
	return srv.Handler()
}

// The cached upstream era is dropped when the upstream stops behaving like
// it (M-08): an upstream upgraded in place from legacy to modern refuses
// the next passed-through initialize with a modern error; that request
// fails, the one after it probes again and gets the legacy face.
func TestReprobeWhenUpstreamChangesEra(t *testing.T) {
	ctx := ctxT(t)
	up := newSwitchable(t, legacyHandler(t))
	br := startBridge(t, router.Config{Upstream: up.url})

	a := newLegacyClient(t, br.url, "a")
	if r := a.initialize(ctx); field(t, mustOK(t, "initialize (legacy upstream)", r), "serverInfo.name") != "tasksbridge-legacy-fixture" {
		t.Fatalf("not passed through: %v", r)
	}
	up.set(modernHandler(t)) // the upgrade
	b := newLegacyClient(t, br.url, "b")
	if r := b.initialize(ctx); r.Err == nil || r.Err.Code != -32022 {
		t.Fatalf("initialize right after the upgrade: %v, want the upstream's -32022", r)
	}
	c := newLegacyClient(t, br.url, "c")
	r := c.initialize(ctx)
	mustOK(t, "initialize after re-probe", r)
	if field(t, r.Result, "capabilities.tasks.requests") == "" || field(t, r.Result, "serverInfo.name") != "tasksbridge-demo" {
		t.Errorf("not served by the legacy face after re-probe: %s", r.Result)
	}
	mustOK(t, "echo", c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}))
}

// An upstream that cannot be reached has no era: requests get 503 and a
// JSON-RPC -32603 naming it (counted as upstream_unavailable, upstream era
// unknown), and nothing is cached, so the first request after it comes back
// is served.
func TestUnreachableUpstreamIsNotCached(t *testing.T) {
	ctx := ctxT(t)
	down := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream restarting", http.StatusBadGateway)
	})
	up := newSwitchable(t, down)
	m := metrics.New(metrics.Options{})
	br := startBridge(t, router.Config{Upstream: up.url, Metrics: m, ProbeTimeout: 5 * time.Second})

	mc := newModernClient(t, br.url, "modern-app")
	r := mc.call(ctx, "server/discover", nil)
	if r.Status != http.StatusServiceUnavailable || r.Err == nil || r.Err.Code != -32603 || !strings.Contains(r.Err.Message, up.url) {
		t.Fatalf("discover while the upstream is down: %v", r)
	}
	// Still ready: the replica can serve (its store answers) and says why
	// the upstream cannot be reached; an upstream outage is not unreadiness
	// (TestReadyzMeansThisReplicaCanServe).
	if code, body := get(t, br.base+"/readyz"); code != http.StatusOK || !strings.Contains(body, "unreachable") {
		t.Errorf("/readyz while down: %d %s", code, body)
	}
	up.set(modernHandler(t))
	mustOK(t, "discover after the upstream came back", mc.call(ctx, "server/discover", nil))
	fams := families(t, scrape(t, br.base+"/metrics"))
	if n, _ := sample(fams, "tasksbridge_requests_total", "client_era", "modern", "upstream_era", "unknown", "method", "server/discover", "outcome", "upstream_unavailable"); n != 1 {
		t.Errorf("unavailable requests counted %v, want 1", n)
	}
	if n, _ := sample(fams, "tasksbridge_requests_total", "client_era", "modern", "upstream_era", "modern", "method", "server/discover", "outcome", "ok"); n != 1 {
		t.Errorf("ok requests counted %v, want 1", n)
	}
}

// Graceful shutdown cuts passthrough streams that only end when the client
// leaves (a legacy client's standalone GET stream), so the HTTP server's
// Shutdown finishes instead of waiting out its timeout.
func TestShutdownCutsPassthroughStreams(t *testing.T) {
	ctx := ctxT(t)
	up := newSwitchable(t, legacyHandler(t))
	s, err := router.New(router.Config{Upstream: up.url, Store: sessionmap.NewMemory(), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: s.Mux(true)}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "streamer", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	select {
	case <-up.gets: // the GET stream reached the upstream through the bridge
	case <-ctx.Done():
		t.Fatal("no standalone GET stream")
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		t.Errorf("server shutdown: %v", err)
	}
	if err := hs.Shutdown(sctx); err != nil {
		t.Errorf("http shutdown waited for the passthrough stream: %v", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("serve: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// Bridge endpoint rules on the passthrough paths too: DNS-rebinding
// protection (a foreign Origin gets 403) and the body limit (413).
func TestPassthroughGuards(t *testing.T) {
	ctx := ctxT(t)
	br := startBridge(t, router.Config{Upstream: startModern(t), MaxBodyBytes: 2048})
	mc := newModernClient(t, br.url, "m")
	mc.headers = map[string]string{"Origin": "http://attacker.example"}
	if r := mc.call(ctx, "server/discover", nil); r.Status != http.StatusForbidden {
		t.Errorf("foreign Origin: %v, want 403", r)
	}
	mc.headers = map[string]string{"Origin": "http://127.0.0.1:9999"}
	mustOK(t, "loopback Origin", mc.call(ctx, "server/discover", nil))
	mc.headers = nil
	if r := mc.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": strings.Repeat("x", 4096)}}); r.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %v, want 413", r)
	}
}

// TestHelperStdioUpstream is not a test: re-executed by the stdio tests, it
// serves the embedded modern server or the legacy fixture on stdin/stdout.
func TestHelperStdioUpstream(t *testing.T) {
	ctx := context.Background()
	switch os.Getenv("TASKSBRIDGE_SERVER_TEST_UPSTREAM") {
	case "modern":
		srv := demo.New(demo.Options{PollInterval: 20 * time.Millisecond})
		_ = srv.ServeIO(ctx, os.Stdin, os.Stdout)
	case "legacy":
		fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
		_ = fx.Run(ctx, &mcp.StdioTransport{})
	default:
		t.Skip("helper process for the stdio upstream tests")
	}
	os.Exit(0)
}

func helperCommand(t *testing.T, era string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TASKSBRIDGE_SERVER_TEST_UPSTREAM", era)
	return "'" + exe + "' -test.run=^TestHelperStdioUpstream$"
}

// A stdio upstream (UpstreamCommand): the translated paths work and are
// metered on the connection; same-era clients cannot be passed through (no
// URL) and get HTTP 501 with a JSON-RPC error saying so.
func TestStdioUpstream(t *testing.T) {
	t.Run("modern", func(t *testing.T) {
		ctx := ctxT(t)
		m := metrics.New(metrics.Options{})
		br := startBridge(t, router.Config{UpstreamCommand: helperCommand(t, "modern"), Metrics: m})
		lc := newLegacyClient(t, br.url, "legacy-app")
		mustOK(t, "initialize", lc.initialize(ctx))
		res := mustOK(t, "echo", lc.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "over a pipe"}}))
		if !strings.Contains(string(res), "over a pipe") {
			t.Errorf("echo %s", res)
		}
		mc := newModernClient(t, br.url, "modern-app")
		r := mc.call(ctx, "server/discover", nil)
		if r.Status != http.StatusNotImplemented || r.Err == nil || !strings.Contains(r.Err.Message, "directly") {
			t.Errorf("modern client of a stdio modern upstream: %v, want 501", r)
		}
		fams := families(t, scrape(t, br.base+"/metrics"))
		if n, _ := sample(fams, "tasksbridge_upstream_requests_total", "code", "ok", "method", "tools/call"); n != 1 {
			t.Errorf("upstream tools/call over stdio counted %v, want 1", n)
		}
		if n, _ := sample(fams, "tasksbridge_requests_total", "client_era", "modern", "upstream_era", "modern", "method", "server/discover", "outcome", "internal"); n != 1 {
			t.Errorf("refused passthrough counted %v, want 1", n)
		}
	})
	t.Run("legacy", func(t *testing.T) {
		ctx := ctxT(t)
		br := startBridge(t, router.Config{UpstreamCommand: helperCommand(t, "legacy")})
		mc := newModernClient(t, br.url, "modern-app")
		d := mustOK(t, "server/discover", mc.call(ctx, "server/discover", nil))
		if !strings.Contains(string(d), modern.TasksExtensionID) {
			t.Errorf("discover %s", d)
		}
		res := mustOK(t, "echo", mc.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "modern over a pipe"}}))
		if !strings.Contains(string(res), "modern over a pipe") {
			t.Errorf("echo %s", res)
		}
		lc := newLegacyClient(t, br.url, "legacy-app")
		if r := lc.initialize(ctx); r.Status != http.StatusNotImplemented {
			t.Errorf("legacy client of a stdio legacy upstream: %v, want 501", r)
		}
	})
}

// ServeStdio serves one client on a byte stream, its era from its first
// message: a legacy client of a modern upstream (legacy face), a modern
// client of a legacy upstream (modern face), both metered with the
// client's name.
func TestServeStdio(t *testing.T) {
	run := func(t *testing.T, up string, connect func(ctx context.Context, tr mcp.Transport) (*mcp.ClientSession, error)) *metrics.Metrics {
		ctx := ctxT(t)
		m := metrics.New(metrics.Options{})
		s, err := router.New(router.Config{Upstream: up, Store: sessionmap.NewMemory(), Logger: quietLogger(), Metrics: m})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- s.ServeStdio(ctx, inR, outW)
			outW.Close()
		}()
		cs, err := connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW})
		if err != nil {
			t.Fatalf("connect over stdio: %v", err)
		}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "stdio"}})
		if err != nil || len(r.Content) == 0 {
			t.Fatalf("echo: %v %v", r, err)
		}
		cs.Close()
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-ctx.Done():
			t.Fatal("ServeStdio did not return after EOF")
		}
		return m
	}
	count := func(t *testing.T, m *metrics.Metrics, labels ...string) float64 {
		t.Helper()
		var b strings.Builder
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		b.WriteString(rec.Body.String())
		n, _ := sample(families(t, b.String()), labels[0], labels[1:]...)
		return n
	}
	t.Run("legacy-client", func(t *testing.T) {
		m := run(t, startModern(t), func(ctx context.Context, tr mcp.Transport) (*mcp.ClientSession, error) {
			return mcp.NewClient(&mcp.Implementation{Name: "stdio-legacy", Version: "3"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		})
		if n := count(t, m, "tasksbridge_client_requests_total", "era", "legacy", "client", "stdio-legacy", "version", "3"); n != 2 {
			t.Errorf("stdio legacy client requests %v, want 2 (initialize, tools/call)", n)
		}
		if n := count(t, m, "tasksbridge_legacy_calls_total", "method", "initialize", "client", "stdio-legacy"); n != 1 {
			t.Errorf("legacy initialize calls %v", n)
		}
	})
	t.Run("modern-client", func(t *testing.T) {
		up, _ := startLegacy(t)
		m := run(t, up, func(ctx context.Context, tr mcp.Transport) (*mcp.ClientSession, error) {
			caps := &mcp.ClientCapabilities{}
			caps.AddExtension(modern.TasksExtensionID, nil)
			return mcp.NewClient(&mcp.Implementation{Name: "stdio-modern", Version: "4"}, &mcp.ClientOptions{Capabilities: caps}).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: modern.ProtocolVersion})
		})
		if n := count(t, m, "tasksbridge_requests_total", "client_era", "modern", "upstream_era", "legacy", "method", "tools/call", "outcome", "ok"); n != 1 {
			t.Errorf("stdio modern tools/call %v, want 1", n)
		}
		if n := count(t, m, "tasksbridge_client_requests_total", "era", "modern", "client", "stdio-modern", "version", "4"); n < 2 {
			t.Errorf("stdio modern client requests %v, want discover and tools/call", n)
		}
	})
}

// After a restart on the same data dir, a legacy client that keeps its
// Mcp-Session-Id is still counted under its own name: the router reads the
// session's stored initialize (the face rehydrates the session itself).
func TestRestartKeepsLegacyClientNames(t *testing.T) {
	ctx := ctxT(t)
	up := startModern(t)
	dir := t.TempDir()
	first, err := router.New(router.Config{Upstream: up, DataDir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(first.Mux(true))
	lc := newLegacyClient(t, hs.URL+"/mcp", "long-lived-app")
	mustOK(t, "initialize", lc.initialize(ctx))
	_ = first.Shutdown(ctx)
	hs.CloseClientConnections()
	hs.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	m := metrics.New(metrics.Options{})
	br := startBridge(t, router.Config{Upstream: up, DataDir: dir, Metrics: m})
	lc.url = br.url
	mustOK(t, "tools/list after the restart", lc.call(ctx, "tools/list", nil))
	fams := families(t, scrape(t, br.base+"/metrics"))
	if n, _ := sample(fams, "tasksbridge_client_requests_total", "era", "legacy", "client", "long-lived-app", "version", "1.0.0"); n != 1 {
		t.Errorf("requests of the rehydrated session's client %v, want 1", n)
	}
	if n, _ := sample(fams, "tasksbridge_sessions_active", "era", "legacy"); n != 1 {
		t.Errorf("sessions_active{legacy} %v, want 1 (rehydrated)", n)
	}
}
