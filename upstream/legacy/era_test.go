package legacyup_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

func TestParseEraMode(t *testing.T) {
	for in, want := range map[string]legacyup.EraMode{"": legacyup.EraAuto, "auto": legacyup.EraAuto, "Legacy": legacyup.EraPinLegacy, " modern ": legacyup.EraPinModern} {
		got, err := legacyup.ParseEraMode(in)
		if err != nil || got != want {
			t.Errorf("ParseEraMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := legacyup.ParseEraMode("2026"); err == nil {
		t.Error("ParseEraMode accepted a bad value")
	}
}

func TestEraSelectorPinnedNeverProbes(t *testing.T) {
	probe := func(context.Context) (legacyup.Era, error) { t.Fatal("pinned mode probed"); return 0, nil }
	for mode, want := range map[legacyup.EraMode]legacyup.Era{legacyup.EraPinLegacy: legacyup.EraLegacy, legacyup.EraPinModern: legacyup.EraModern} {
		e := &legacyup.EraSelector{Mode: mode, Probe: probe}
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
	answer := legacyup.EraUnknown
	e := &legacyup.EraSelector{Mode: legacyup.EraAuto, Probe: func(context.Context) (legacyup.Era, error) {
		calls.Add(1)
		if answer == legacyup.EraUnknown {
			return legacyup.EraUnknown, errors.New("unreachable")
		}
		return answer, nil
	}}
	ctx := context.Background()
	if _, err := e.Era(ctx); err == nil {
		t.Fatal("an unreachable upstream gave an era")
	}
	answer = legacyup.EraLegacy
	if got, err := e.Era(ctx); err != nil || got != legacyup.EraLegacy {
		t.Fatalf("Era = %v, %v", got, err)
	}
	if got, _ := e.Era(ctx); got != legacyup.EraLegacy || calls.Load() != 2 {
		t.Fatalf("cached answer not used: %v after %d probes (an unknown answer must not be cached, a known one must)", got, calls.Load())
	}
	answer = legacyup.EraModern
	e.Invalidate()
	if got, _ := e.Era(ctx); got != legacyup.EraModern || calls.Load() != 3 {
		t.Fatalf("after Invalidate: %v after %d probes", got, calls.Load())
	}
}

func TestEraSelectorSharesOneProbe(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	var calls atomic.Int32
	e := &legacyup.EraSelector{Mode: legacyup.EraAuto, Probe: func(context.Context) (legacyup.Era, error) {
		calls.Add(1)
		entered <- struct{}{}
		<-release
		return legacyup.EraModern, nil
	}}
	var wg sync.WaitGroup
	results := make(chan legacyup.Era, 4)
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
		if era != legacyup.EraModern {
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
	fx := legacyfixture.New(legacyfixture.Options{})
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
	for url, want := range map[string]legacyup.Era{legacyURL: legacyup.EraLegacy, modernURL: legacyup.EraModern} {
		e := &legacyup.EraSelector{Mode: legacyup.EraAuto, Probe: legacyup.ProbeWith(modernup.NewHTTP(url, nil))}
		got, err := e.Era(ctxT(t))
		if err != nil || got != want {
			t.Errorf("%s: Era = %v, %v; want %v", url, got, err, want)
		}
	}
	e := &legacyup.EraSelector{Mode: legacyup.EraAuto, Probe: legacyup.ProbeWith(modernup.NewHTTP("http://127.0.0.1:1/mcp", nil))}
	if got, err := e.Era(ctxT(t)); err == nil || got != legacyup.EraUnknown || e.Cached() != legacyup.EraUnknown {
		t.Errorf("unreachable upstream: %v, %v (cached %v); want unknown, an error, nothing cached", got, err, e.Cached())
	}
}
