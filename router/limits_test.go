package router_test

import (
	"net/http"
	"strings"
	"testing"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/router"
)

// --max-sessions through the composition root: the legacy session beyond
// the bound gets HTTP 503 with a JSON-RPC error, and
// tasksbridge_refused_total{limit="sessions"} counts it.
func TestMaxSessionsRefusalIsCounted(t *testing.T) {
	ctx := ctxT(t)
	up := startModern(t)
	m := metrics.New(metrics.Options{})
	br := startBridge(t, router.Config{Upstream: up, Metrics: m, Legacy: func(c *legacyface.Config) { c.MaxSessions = 2 }})
	for i := range 2 {
		if r := newLegacyClient(t, br.url, "app").initialize(ctx); r.Err != nil || r.Status != http.StatusOK {
			t.Fatalf("initialize %d: %s", i+1, r)
		}
	}
	r := newLegacyClient(t, br.url, "app").initialize(ctx)
	if r.Status != http.StatusServiceUnavailable || r.Err == nil || !strings.Contains(r.Err.Message, "--max-sessions") {
		t.Errorf("initialize 3 with --max-sessions 2: %s", r)
	}
	fams := families(t, scrape(t, br.base+"/metrics"))
	if n, _ := sample(fams, "tasksbridge_refused_total", "limit", "sessions"); n != 1 {
		t.Errorf("tasksbridge_refused_total{limit=sessions} %v, want 1", n)
	}
}
