package router

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The meter keeps one entry per task the process tracks, for the task's
// whole life (10,000 parked waits on distinct tasks are 10,000 entries):
// codes and a shared scope, not strings and a time, so about 70 B each
// beside the id (about 200 B before, counting the map's slack the same
// way). Its scopes go with their last task.
func TestTrackedTasksHeap(t *testing.T) {
	const n, perScope = 10_000, 100
	now := time.Now()
	ttl := int64(60_000)
	st := newMeteredStore(sessionmap.NewMemory(), metrics.New(metrics.Options{}), nil)
	st.now = func() time.Time { return now }
	tasks := make([]sessionmap.Task, n)
	for i := range tasks {
		tasks[i] = sessionmap.Task{ID: sessionmap.NewTaskID(), Status: sessionmap.StatusWorking,
			Scope:     sessionmap.Scope{Principal: fmt.Sprintf("p%d", i/perScope), Session: fmt.Sprintf("s%d", i/perScope)},
			Direction: sessionmap.LegacyToModern, Origin: sessionmap.OriginUpstreamTask, CreatedAt: now, TTLMs: &ttl}
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, task := range tasks {
		st.observe(task)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(tasks)
	runtime.KeepAlive(st)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("a tracked task costs %d B of heap beside its id", per)
	if limit := int64(110); per > limit {
		t.Errorf("a tracked task costs %d B of heap, want ≤ %d", per, limit)
	}

	// The entries still say what they were told.
	if d, o, ok := st.origin(tasks[5].ID); !ok || d != string(sessionmap.LegacyToModern) || o != metrics.OriginUpstream {
		t.Errorf("origin = %q %q %v", d, o, ok)
	}
	if len(st.scopes) != n/perScope {
		t.Errorf("%d scopes for %d sessions", len(st.scopes), n/perScope)
	}
	// A listed read (no direction or origin) keeps them; a terminal status sticks.
	done := tasks[5]
	done.Status, done.Direction, done.Origin = sessionmap.StatusCompleted, "", ""
	st.observe(done)
	stale := tasks[5]
	st.observe(stale)
	if tt := st.tracked[done.ID]; tt.statusOf() != sessionmap.StatusCompleted || valueOf(directions, tt.direction) != sessionmap.LegacyToModern {
		t.Errorf("after a listed terminal read and a stale one: %s %s", tt.statusOf(), valueOf(directions, tt.direction))
	}
	// Deleting a session's tasks forgets them and their scope, and only them.
	sc := tasks[0].Scope
	if _, err := st.DeleteSessionTasks(t.Context(), sc); err != nil {
		t.Fatal(err)
	}
	if _, ok := st.tracked[tasks[0].ID]; ok || st.scopes[sc] != nil || len(st.tracked) != n-perScope || len(st.scopes) != n/perScope-1 {
		t.Errorf("after deleting one session's tasks: %d tracked, %d scopes, its scope %v", len(st.tracked), len(st.scopes), st.scopes[sc])
	}
	// Expired tasks go with the next sweep, and their scopes with them.
	now = now.Add(2 * time.Minute)
	st.maybeSweep()
	if len(st.tracked) != 0 || len(st.scopes) != 0 {
		t.Errorf("after the sweep: %d tracked, %d scopes", len(st.tracked), len(st.scopes))
	}
}
