package legacyup_test

import (
	"context"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// The probe against real upstreams: the legacy fixture (go-sdk, stateful,
// 2025-11-25) is legacy, the embedded modern demo server is modern.
func TestEraProbesRealUpstreams(t *testing.T) {
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
	for url, want := range map[string]era.Era{legacyURL: era.Legacy, modernURL: era.Modern} {
		e := &era.Selector{Mode: era.Auto, Probe: modernup.NewHTTP(url, nil).ProbeEra}
		got, err := e.Era(ctxT(t))
		if err != nil || got != want {
			t.Errorf("%s: Era = %v, %v; want %v", url, got, err, want)
		}
	}
	e := &era.Selector{Mode: era.Auto, Probe: modernup.NewHTTP("http://127.0.0.1:1/mcp", nil).ProbeEra}
	if got, err := e.Era(ctxT(t)); err == nil || got != era.Unknown || e.Cached() != era.Unknown {
		t.Errorf("unreachable upstream: %v, %v (cached %v); want unknown, an error, nothing cached", got, err, e.Cached())
	}
}
