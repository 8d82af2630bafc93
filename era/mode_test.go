package era_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]era.Mode{"": era.Auto, "auto": era.Auto, "Legacy": era.PinLegacy, " modern ": era.PinModern} {
		got, err := era.ParseMode(in)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := era.ParseMode("2026"); err == nil {
		t.Error("ParseMode accepted a bad value")
	}
}

func TestSelectorPinnedNeverProbes(t *testing.T) {
	probe := func(context.Context) (era.Era, error) { t.Fatal("pinned mode probed"); return era.Unknown, nil }
	for mode, want := range map[era.Mode]era.Era{era.PinLegacy: era.Legacy, era.PinModern: era.Modern} {
		e := &era.Selector{Mode: mode, Probe: probe}
		if got, err := e.Era(context.Background()); err != nil || got != want {
			t.Errorf("%s: Era = %v, %v", mode, got, err)
		}
		if e.Cached() != want {
			t.Errorf("%s: Cached = %v", mode, e.Cached())
		}
	}
}

func TestSelectorAutoCachesAndReprobes(t *testing.T) {
	var calls atomic.Int32
	answer := era.Unknown
	e := &era.Selector{Mode: era.Auto, Probe: func(context.Context) (era.Era, error) {
		calls.Add(1)
		if answer == era.Unknown {
			return era.Unknown, errors.New("unreachable")
		}
		return answer, nil
	}}
	ctx := context.Background()
	if _, err := e.Era(ctx); err == nil {
		t.Fatal("an unreachable upstream gave an era")
	}
	answer = era.Legacy
	if got, err := e.Era(ctx); err != nil || got != era.Legacy {
		t.Fatalf("Era = %v, %v", got, err)
	}
	if got, _ := e.Era(ctx); got != era.Legacy || calls.Load() != 2 {
		t.Fatalf("cached answer not used: %v after %d probes (an unknown answer must not be cached, a known one must)", got, calls.Load())
	}
	answer = era.Modern
	e.Invalidate()
	if got, _ := e.Era(ctx); got != era.Modern || calls.Load() != 3 {
		t.Fatalf("after Invalidate: %v after %d probes", got, calls.Load())
	}
}

func TestSelectorSharesOneProbe(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	var calls atomic.Int32
	e := &era.Selector{Mode: era.Auto, Probe: func(context.Context) (era.Era, error) {
		calls.Add(1)
		entered <- struct{}{}
		<-release
		return era.Modern, nil
	}}
	var wg sync.WaitGroup
	results := make(chan era.Era, 4)
	wg.Add(1)
	go func() { defer wg.Done(); got, _ := e.Era(context.Background()); results <- got }()
	<-entered // the first caller is probing
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); got, _ := e.Era(context.Background()); results <- got }()
	}
	close(release)
	wg.Wait()
	close(results)
	for got := range results {
		if got != era.Modern {
			t.Fatalf("era %v", got)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("%d probes for concurrent callers, want 1", calls.Load())
	}
}
