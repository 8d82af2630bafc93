package legacyface_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// BenchmarkTaskCreate is one task-augmented tools/call end to end (legacy
// client → bridge on a Badger data dir → demo upstream): the create path
// the intent record (intent.go) adds one durable store write to.
func BenchmarkTaskCreate(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	up := demo.New(demo.Options{PollInterval: 20 * time.Millisecond})
	upURL, stop, err := up.Start(ctx, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { up.Close(); _ = stop() }()
	st, err := sessionmap.OpenBadger(b.TempDir(), sessionmap.WithGCInterval(0), sessionmap.WithLogger(quietLogger()))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	br, err := legacyface.New(legacyface.Config{Upstream: upURL, Store: st, Logger: quietLogger(), Watch: fastWatch()})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(br.Mux())
	defer func() {
		sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		_ = br.Shutdown(sctx)
		c()
		hs.Close()
		_ = br.Close()
	}()
	// rawClient reports through a *testing.T; only its success paths run
	// here (a failure ends the benchmark through b.Fatalf below).
	c := newRawClient(&testing.T{}, hs.URL+"/mcp")
	c.initialize(ctx, nil)
	params := map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 3600000, "text": "b"}, "task": map[string]any{}}
	b.ResetTimer()
	for range b.N {
		r, err := c.try(ctx, "tools/call", params)
		if err != nil || r.Err != nil {
			b.Fatalf("create: %v %v", err, r)
		}
	}
}
