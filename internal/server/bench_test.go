package server_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/metrics"
	"github.com/tasksbridge/tasksbridge/internal/server"
	legacyface "github.com/tasksbridge/tasksbridge/legacy/face"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// BenchmarkEcho measures what the composition root adds to a synchronous
// tools/call: era detection, routing and wire metering. legacy-face and
// legacy-server are the same legacy→modern path without and with it;
// modern-direct and modern-passthrough a modern client straight to the
// upstream and through the bridge's passthrough.
//
//	go test -run '^$' -bench Echo -benchtime 2000x ./internal/server/
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

	s, err := server.New(server.Config{Upstream: upURL, Store: sessionmap.NewMemory(), Logger: quietLogger(), Metrics: metrics.New(metrics.Options{})})
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
