package router_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// BenchmarkEcho measures what the composition root adds to a synchronous
// tools/call: era detection, routing and wire metering. legacy-face and
// legacy-server are the same legacy→modern path without and with it;
// modern-direct and modern-passthrough a modern client straight to the
// upstream and through the bridge's passthrough.
//
//	go test -run '^$' -bench Echo -benchtime 2000x ./router/
func BenchmarkEcho(b *testing.B) {
	ctx := context.Background()
	up := demo.New(demo.Options{PollInterval: 20 * time.Millisecond})
	upURL, stop, err := up.Start(ctx, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { up.Close(); _ = stop() }()

	fb, err := legacyface.New(legacyface.Config{Upstream: upURL, Store: sessionmap.NewMemory(), Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer fb.Close()
	faceHS := httptest.NewServer(fb.Mux())
	defer faceHS.Close()

	s, err := router.New(router.Config{Upstream: upURL, Store: sessionmap.NewMemory(), Logger: quietLogger(), Metrics: metrics.New(metrics.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	srvHS := httptest.NewServer(s.Mux(true))
	defer srvHS.Close()

	echo := map[string]any{"name": "echo", "arguments": map[string]any{"text": "bench"}}
	run := func(b *testing.B, c *rawClient) {
		if c.modern {
			c.call(ctx, "tools/call", echo) // warm up (the era probe)
		} else if r := c.initialize(ctx); r.Err != nil {
			b.Fatal(r)
		}
		b.ResetTimer()
		for range b.N {
			if r := c.call(ctx, "tools/call", echo); r.Err != nil {
				b.Fatal(r)
			}
		}
	}
	b.Run("legacy-face", func(b *testing.B) { run(b, newLegacyClient(b, faceHS.URL+"/mcp", "bench")) })
	b.Run("legacy-server", func(b *testing.B) { run(b, newLegacyClient(b, srvHS.URL+"/mcp", "bench")) })
	b.Run("modern-direct", func(b *testing.B) { run(b, newModernClient(b, upURL, "bench")) })
	b.Run("modern-passthrough", func(b *testing.B) { run(b, newModernClient(b, srvHS.URL+"/mcp", "bench")) })
}

// cannedUpstream answers every POST like the demo server answers an echo
// call: one SSE event with the result, without touching the network, so
// that BenchmarkPassthroughHandler measures the proxies' own CPU.
type cannedUpstream struct{}

func (cannedUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	body := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":17,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"bench\"}]}}\n\n"
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: -1, Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// BenchmarkPassthroughHandler compares the bridge's passthrough with a bare
// httputil.ReverseProxy (the cost floor of figure 4c) in front of the same
// in-memory upstream, with no network: what is left is each handler's own
// work per call (reading, classifying and metering on the bridge's side).
//
//	go test -run '^$' -bench PassthroughHandler -benchmem ./router/
func BenchmarkPassthroughHandler(b *testing.B) {
	const upURL = "http://127.0.0.1:1/mcp"
	s, err := router.New(router.Config{Upstream: upURL, UpstreamEra: "modern", Store: sessionmap.NewMemory(),
		Logger: quietLogger(), Metrics: metrics.New(metrics.Options{}), Transport: cannedUpstream{}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	u, _ := url.Parse(upURL)
	floor := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.URL.Path = u.Path; r.Out.Host = "" },
		Transport:     cannedUpstream{},
		FlushInterval: -1,
	}
	body := `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"bridgeload","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"bench"}}}`
	run := func(b *testing.B, h http.Handler) {
		b.ReportAllocs()
		for range b.N {
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"bench"`) {
				b.Fatalf("HTTP %d: %s", w.Code, w.Body)
			}
		}
	}
	b.Run("bridge", func(b *testing.B) { run(b, s.Handler()) })
	b.Run("revproxy", func(b *testing.B) { run(b, floor) })
}
