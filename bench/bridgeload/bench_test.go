package bridgeload

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/demo"
)

// The benchmarks run upstream, bridge (Badger store, as deployed) and
// clients in this process over loopback TCP, so ns/op and allocs/op cover
// the whole round trip: the bridge's own share is the bridge figure minus
// the direct one of the same run. The load tool (bench/cmd/bridgeload) runs
// the bridge as its own process and is where docs/PERFORMANCE.md's figures
// come from. Run: go test -run '^$' -bench . -benchmem ./bench/bridgeload

type echoEnv struct {
	up      *Upstream
	br      *Bridge
	direct  []Echo
	bridged []Echo
}

// startEcho starts an upstream and a bridge in front of it, with workers
// clients per path sharing one HTTP client configuration.
func startEcho(b *testing.B, workers int) *echoEnv {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	up, err := StartUpstream(ctx, demo.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = up.Close() })
	br, err := StartBridge(BridgeOptions{Upstream: up.URL, DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := br.Close(); err != nil {
			b.Errorf("bridge close: %v", err)
		}
	})
	dhc, bhc := NewHTTPClient(workers), NewHTTPClient(workers)
	b.Cleanup(dhc.CloseIdleConnections)
	b.Cleanup(bhc.CloseIdleConnections)
	env := &echoEnv{up: up, br: br}
	m := NewModern(dhc, up.URL)
	for i := 0; i < workers; i++ {
		l, err := DialLegacy(ctx, bhc, br.URL)
		if err != nil {
			b.Fatal(err)
		}
		env.direct = append(env.direct, ModernEcho(m))
		env.bridged = append(env.bridged, LegacyEcho(l))
		// Warm both paths (connections, discover cache, session).
		if err := env.direct[i](ctx); err != nil {
			b.Fatal(err)
		}
		if err := env.bridged[i](ctx); err != nil {
			b.Fatal(err)
		}
	}
	return env
}

// BenchmarkEchoLatency: one client calling echo back to back (the
// echo figure of docs/PERFORMANCE.md, with p50 latency added). Reports p50 and p99 besides the mean ns/op.
func BenchmarkEchoLatency(b *testing.B) {
	env := startEcho(b, 1)
	for _, c := range []struct {
		name string
		e    Echo
	}{{"direct", env.direct[0]}, {"bridge", env.bridged[0]}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := c.e(ctx); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			s := Summarize(lat)
			b.ReportMetric(float64(s.P50.Microseconds()), "p50-µs")
			b.ReportMetric(float64(s.P99.Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkEchoThroughput: 8 clients calling echo concurrently
// (throughput ratio = direct ns/op ÷ bridge ns/op).
func BenchmarkEchoThroughput(b *testing.B) {
	const workers = 8
	env := startEcho(b, workers)
	for _, c := range []struct {
		name string
		es   []Echo
	}{{"direct", env.direct}, {"bridge", env.bridged}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			var next atomic.Int64
			b.SetParallelism((workers + 1) / 2) // × GOMAXPROCS goroutines; each takes its own client
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				e := c.es[int(next.Add(1)-1)%len(c.es)]
				for pb.Next() {
					if err := e(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkResultDelay: one op = create a task, park tasks/result, complete
// the task upstream, read the answer. Reports the
// completion → answer delay percentiles. push-memstore swaps Badger for
// the in-memory store: the difference is the durable write (fsync) of the
// terminal snapshot, which the bridge makes before it wakes the waiters.
func BenchmarkResultDelay(b *testing.B) {
	for _, c := range []struct {
		name   string
		opts   demo.Options
		memory bool
	}{
		{"push", demo.Options{}, false},
		{"push-memstore", demo.Options{}, true},
		{"poll", demo.Options{DisablePush: true, PollInterval: 100 * time.Millisecond}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			up, err := StartUpstream(ctx, c.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer up.Close()
			opts := BridgeOptions{Upstream: up.URL, DataDir: b.TempDir(), KeepAlive: 5 * time.Millisecond}
			if c.memory {
				opts.DataDir = ""
			}
			br, err := StartBridge(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer br.Close()
			b.ReportAllocs()
			b.ResetTimer()
			r, err := ResultDelay(ctx, up, br.URL, b.N)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if r.Errors > 0 {
				b.Fatalf("%d tasks/result errors, first: %v", r.Errors, r.FirstErr)
			}
			b.ReportMetric(float64(r.Delays.P50.Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(r.Delays.P99.Microseconds())/1000, "p99-ms")
		})
	}
}
