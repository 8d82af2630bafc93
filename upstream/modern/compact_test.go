package modernup

import (
	"context"
	"testing"
	"unsafe"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/modern"
)

// sameString reports whether a and b share their bytes.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// A task read (tasks/get) or pushed (notifications/tasks) keeps one copy of
// what it holds twice (compactTask): the caller's task id, the status
// constant, createdAt for an equal lastUpdatedAt. Its values are those the
// upstream sent.
func TestDecodedTasksShareStrings(t *testing.T) {
	env := startDemo(t, demo.Options{})
	c := env.client
	id := createTask(t, c, "slow_task", map[string]any{"ms": 60_000, "text": "fin"}, CallOptions{})
	asked := string([]byte(id)) // the caller's own copy of the id
	got, err := c.GetTask(ctxT(t), asked, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	listened := string([]byte(id))
	ts, err := c.ListenTasks(ctx, []string{listened}, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pushed := <-ts.Tasks
	if pushed == nil {
		t.Fatal("no notification")
	}
	for name, d := range map[string]*modern.DetailedTask{"tasks/get": got, "notifications/tasks": pushed} {
		if d.TaskID != id || d.Status != modern.StatusWorking || d.CreatedAt == "" || d.LastUpdatedAt == "" {
			t.Fatalf("%s: %+v", name, d)
		}
		if !sameString(string(d.Status), string(modern.StatusWorking)) {
			t.Errorf("%s: status is a decoded copy, not the constant", name)
		}
		if d.LastUpdatedAt == d.CreatedAt && !sameString(d.LastUpdatedAt, d.CreatedAt) {
			t.Errorf("%s: lastUpdatedAt equal to createdAt is a second copy", name)
		}
	}
	if got.LastUpdatedAt != got.CreatedAt {
		t.Fatalf("the demo's new task was updated: %+v (the sharing above went untested)", got)
	}
	if !sameString(got.TaskID, asked) {
		t.Error("tasks/get: the task id is a decoded copy, not the caller's")
	}
	if !sameString(pushed.TaskID, listened) {
		t.Error("notifications/tasks: the task id is a decoded copy, not the caller's")
	}
	env.srv.CompleteNow(id)
	done := <-ts.Tasks
	if done == nil || done.Status != modern.StatusCompleted || !sameString(string(done.Status), string(modern.StatusCompleted)) {
		t.Fatalf("completion %+v", done)
	}
}
