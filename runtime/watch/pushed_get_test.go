package watch

import (
	"context"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
)

// While notifications/tasks flow, the watcher's state is current (M-33): a
// Get of a state older than the task's poll interval answers it without a
// read upstream — which, the watcher reading one request at a time, a
// stalled upstream would hold, and the pushed changes behind it. Before,
// such a Get asked the watcher to poll and waited for that read.
func TestGetWhilePushedReadsNoUpstream(t *testing.T) {
	f := newFakeSource()
	f.ackAll = true
	f.set(task("T", modern.StatusWorking, 1000))
	m, clk := newTestManager(t, pushSource{f}, func(c *Config) { c.PushPollInterval = time.Minute })
	s, _ := m.Attach(context.Background(), key("T"))
	defer s.Close()
	<-f.listened
	waitGets(t, f, 2) // the first read, and the one after the acknowledgement
	until(t, s, seqAtLeast(2))
	clk.BlockUntil(t, 1)
	clk.Advance(10 * time.Second) // the state is ten poll intervals old
	before := f.getCount("T")
	snap, err := m.Get(context.Background(), key("T"), 0)
	if err != nil || snap.Task == nil || snap.Task.Status != modern.StatusWorking {
		t.Fatalf("Get = %+v, %v", snap.Task, err)
	}
	if n := f.getCount("T"); n != before {
		t.Errorf("Get read the upstream (%d tasks/get, want %d) while its changes are pushed", n, before)
	}
	f.feed().send(task("T", modern.StatusCompleted, 1000))
	until(t, s, terminal)
	if snap, err := m.Get(context.Background(), key("T"), 0); err != nil || !snap.Terminal() {
		t.Fatalf("Get after the pushed completion = %+v, %v", snap.Task, err)
	}
}
