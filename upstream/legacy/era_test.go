package upstream_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/legacy/upstream"
	"github.com/tasksbridge/tasksbridge/legacy/upstream/fixture"
	modernup "github.com/tasksbridge/tasksbridge/modern/upstream"
)

func TestParseEraMode(t *testing.T) {
	for in, want := range map[string]upstream.EraMode{"": upstream.EraAuto, "auto": upstream.EraAuto, "Legacy": upstream.EraPinLegacy, " modern ": upstream.EraPinModern} {
		got, err := upstream.ParseEraMode(in)
		if err != nil || got != want {
			t.Errorf("ParseEraMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := upstream.ParseEraMode("2026"); err == nil {
		t.Error("ParseEraMode accepted a bad value")
	}
}

func TestEraSelectorPinnedNeverProbes(t *testing.T) {
	probe := func(context.Context) (upstream.Era, error) { t.Fatal("pinned mode probed"); return 0, nil }
	for mode, want := range map[upstream.EraMode]upstream.Era{upstream.EraPinLegacy: upstream.EraLegacy, upstream.EraPinModern: upstream.EraModern} {
		e := &upstream.EraSelector{Mode: mode, Probe: probe}
		if got, err := e.Era(context.Background()); err != nil || got != want {
			t.Errorf("%s: Era = %v, %v", mode, got, err)
		}
		if e.Cached() != want {
			t.Errorf("%s: Cached = %v", mode, e.Cached())
		}
	}
}

func TestEraSelectorAutoCachesAndReprobes(t *testing.T) {
	var calls atomic.Int32
	answer := upstream.EraUnknown
	e := &upstream.EraSelector{Mode: upstream.EraAuto, Probe: func(context.Context) (upstream.Era, error) {
		calls.Add(1)
		if answer == upstream.EraUnknown {
			return upstream.EraUnknown, errors.New("unreachable")
		}
		return answer, nil
	}}
	ctx := context.Background()
	if _, err := e.Era(ctx); err == nil {
		t.Fatal("an unreachable upstream gave an era")
	}
	answer = upstream.EraLegacy
	if got, err := e.Era(ctx); err != nil || got != upstream.EraLegacy {
		t.Fatalf("Era = %v, %v", got, err)
	}
	if got, _ := e.Era(ctx); got != upstream.EraLegacy || calls.Load() != 2 {
		t.Fatalf("cached answer not used: %v after %d probes (an unknown answer must not be cached, a known one must)", got, calls.Load())
	}
	answer = upstream.EraModern
	e.Invalidate()
	if got, _ := e.Era(ctx); got != upstream.EraModern || calls.Load() != 3 {
		t.Fatalf("after Invalidate: %v after %d probes", got, calls.Load())
	}
}

func TestEraSelectorSharesOneProbe(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	var calls atomic.Int32
	e := &upstream.EraSelector{Mode: upstream.EraAuto, Probe: func(context.Context) (upstream.Era, error) {
		calls.Add(1)
		entered <- struct{}{}
		<-release
		return upstream.EraModern, nil
	}}
	var wg sync.WaitGroup
	results := make(chan upstream.Era, 4)
	wg.Add(1)
	go func() { defer wg.Done(); era, _ := e.Era(context.Background()); results <- era }()
	<-entered // the first caller is probing
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); era, _ := e.Era(context.Background()); results <- era }()
	}
	close(release)
	wg.Wait()
	close(results)
	for era := range results {
		if era != upstream.EraModern {
			t.Fatalf("era %v", era)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("%d probes for concurrent callers, want 1", calls.Load())
	}
}

// The probe against real upstreams: the legacy fixture (go-sdk, stateful,
// 2025-11-25) is legacy, the embedded modern demo server is modern.
func TestEraSelectorProbesRealUpstreams(t *testing.T) {
	fx := fixture.New(fixture.Options{})
	legacyURL, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	demoSrv := demo.New(demo.Options{})
	modernURL, stopDemo, err := demoSrv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stopDemo() }()
	for url, want := range map[string]upstream.Era{legacyURL: upstream.EraLegacy, modernURL: upstream.EraModern} {
		e := &upstream.EraSelector{Mode: upstream.EraAuto, Probe: upstream.ProbeWith(modernup.NewHTTP(url, nil))}
		got, err := e.Era(ctxT(t))
		if err != nil || got != want {
			t.Errorf("%s: Era = %v, %v; want %v", url, got, err, want)
		}
	}
	e := &upstream.EraSelector{Mode: upstream.EraAuto, Probe: upstream.ProbeWith(modernup.NewHTTP("http://127.0.0.1:1/mcp", nil))}
	if got, err := e.Era(ctxT(t)); err == nil || got != upstream.EraUnknown || e.Cached() != upstream.EraUnknown {
		t.Errorf("unreachable upstream: %v, %v (cached %v); want unknown, an error, nothing cached", got, err, e.Cached())
	}
}
