package router_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/router"
)

// A legacy tasks/result that parks (the legacy face takes its HTTP/1.1
// connection over once the wait blocks, and the handler returns) is metered
// as a blocking one: the wire meter observes the answer written on the
// taken-over connection, so the request counts as ok and its wait time runs
// until the answer, not until the handler returned.
func TestParkedWaitMetered(t *testing.T) {
	ctx := ctxT(t)
	br := startBridge(t, router.Config{Upstream: startModern(t)})
	c := newLegacyClient(t, br.url, "parked-app")
	mustOK(t, "initialize", c.initialize(ctx))
	const work = 400 * time.Millisecond
	created := mustOK(t, "tools/call task", c.call(ctx, "tools/call", map[string]any{
		"name": "slow_task", "arguments": map[string]any{"ms": work.Milliseconds(), "text": "late"}, "task": map[string]any{}}))
	res := mustOK(t, "tasks/result", c.call(ctx, "tasks/result", map[string]any{"taskId": field(t, created, "task.taskId")}))
	if !strings.Contains(string(res), "late") {
		t.Fatalf("tasks/result %s", res)
	}
	fams := families(t, scrape(t, br.base+"/metrics"))
	if n, _ := sample(fams, "tasksbridge_requests_total", "client_era", "legacy", "method", "tasks/result", "outcome", "ok", "upstream_era", "modern"); n != 1 {
		t.Errorf("tasks/result ok = %v, want 1", n)
	}
	f := fams["tasksbridge_task_result_wait_seconds"]
	if f == nil || len(f.GetMetric()) != 1 {
		t.Fatalf("no tasks/result wait observed: %v", f)
	}
	h := f.GetMetric()[0].GetHistogram()
	// The wait began before the task was half done: it lasted at least
	// half the work, which a record taken when the handler returned (at
	// once) would not.
	if h.GetSampleCount() != 1 || h.GetSampleSum() < (work/2).Seconds() {
		t.Errorf("tasks/result wait: %d samples, %.3f s; want 1 sample of at least %.1f s", h.GetSampleCount(), h.GetSampleSum(), (work / 2).Seconds())
	}
}
