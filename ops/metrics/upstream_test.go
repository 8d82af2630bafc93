package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// tasksbridge_upstream_up is absent until the upstream was first tried (a
// 0 before that would read as "down"), then follows the last outcome, with
// no labels at all.
func TestUpstreamUpGauge(t *testing.T) {
	var nilM *Metrics
	nilM.UpstreamUp(true) // a no-op
	m := New(Options{})
	if n := testutil.CollectAndCount(m.upstreamUp); n != 0 {
		t.Fatalf("tasksbridge_upstream_up exported %d series before the upstream was tried", n)
	}
	m.UpstreamUp(false)
	if v := testutil.ToFloat64(m.upstreamUp.WithLabelValues()); v != 0 {
		t.Errorf("down: %v", v)
	}
	m.UpstreamUp(true)
	if v := testutil.ToFloat64(m.upstreamUp.WithLabelValues()); v != 1 {
		t.Errorf("up: %v", v)
	}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "tasksbridge_upstream_up" {
			if len(mf.GetMetric()) != 1 || len(mf.GetMetric()[0].GetLabel()) != 0 || !strings.Contains(mf.GetHelp(), "readiness") {
				t.Errorf("tasksbridge_upstream_up: %v", mf)
			}
			return
		}
	}
	t.Error("tasksbridge_upstream_up not gathered")
}
