package demo

import (
	"testing"

	"github.com/tasksbridge/tasksbridge/modern"
	"time"
)

func TestSmokeEchoSlowTaskGet(t *testing.T) {
	s, clk, url := startServer(t, Options{})
	r := callTool(t, url, "echo", map[string]any{"text": "hi"}, rawCall{})
	t.Logf("echo: %d %s", r.Status, r.Body)
	id, cr := createTask(t, url, "slow_task", map[string]any{"ms": 100, "text": "done"}, rawCall{})
	t.Logf("create: %s", cr)
	d, raw := getTask(t, url, id)
	t.Logf("get: %s", raw)
	if d.Status != modern.StatusWorking {
		t.Fatalf("status %s", d.Status)
	}
	clk.Advance(100 * time.Millisecond)
	d, raw = getTask(t, url, id)
	t.Logf("get: %s", raw)
	if d.Status != modern.StatusCompleted {
		t.Fatalf("status %s", d.Status)
	}
	t.Logf("counters %+v gets=%d", s.Counters(), s.GetCount(id))
}
