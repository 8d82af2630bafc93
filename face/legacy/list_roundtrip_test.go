package legacyface_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// taskReadCounter counts the store's task reads (GetTask and both lists):
// each is one round trip to a remote store.
type taskReadCounter struct {
	sessionmap.Store
	reads atomic.Int64
}

func (s *taskReadCounter) GetTask(ctx context.Context, sc sessionmap.Scope, id string) (sessionmap.Task, error) {
	s.reads.Add(1)
	return s.Store.GetTask(ctx, sc, id)
}

func (s *taskReadCounter) ListTasks(ctx context.Context, sc sessionmap.Scope, n int, cursor string) (sessionmap.Page, error) {
	s.reads.Add(1)
	return s.Store.ListTasks(ctx, sc, n, cursor)
}

func (s *taskReadCounter) ListTasksFull(ctx context.Context, sc sessionmap.Scope, n int, cursor string) (sessionmap.Page, error) {
	s.reads.Add(1)
	return s.Store.ListTasksFull(ctx, sc, n, cursor)
}

// A tasks/list page of 50 tasks costs one task read of the store, not one
// per listed task (with Redis 200 ms away, 51 reads were 10 s per page).
// Before ListTasksFull the face read the page, then each task again.
func TestTasksListOneStoreReadPerPage(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	up := startUpstream(t, demo.Options{})
	st := &taskReadCounter{Store: sessionmap.NewMemory()}
	br := startBridge(t, up, legacyface.Config{Store: st, ListPageSize: 50})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	for range 51 {
		taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "task": map[string]any{}}))
	}
	before := st.reads.Load()
	ids, next := listPage(t, c.call(ctx, "tasks/list", nil))
	if got := st.reads.Load() - before; len(ids) != 50 || next == "" || got != 1 {
		t.Fatalf("tasks/list page of %d tasks (next cursor %q) made %d task reads of the store, want 50 tasks in 1 read",
			len(ids), next, got)
	}
	before = st.reads.Load()
	if ids, next = listPage(t, c.call(ctx, "tasks/list", map[string]any{"cursor": next})); len(ids) != 1 || next != "" {
		t.Fatalf("second page %v, next %q: want the one remaining task", ids, next)
	}
	if got := st.reads.Load() - before; got != 1 {
		t.Errorf("second page made %d task reads, want 1", got)
	}
}

// ListTasksFull fails like faultyStore's other reads (storefault_test.go):
// tasks/list reads its page through it.
func (f *faultyStore) ListTasksFull(ctx context.Context, sc sessionmap.Scope, n int, cursor string) (sessionmap.Page, error) {
	if err := f.fault(ctx, "list_tasks"); err != nil {
		return sessionmap.Page{}, err
	}
	return f.Store.ListTasksFull(ctx, sc, n, cursor)
}
