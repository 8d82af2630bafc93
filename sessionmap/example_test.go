package sessionmap_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// A Memory store holds the sessions and tasks of a bridge: create a session,
// put a task in its scope, then read the task back and list the scope's
// tasks. A scope that does not own the task gets ErrNotFound, exactly as for
// an unknown id (L-51).
func ExampleMemory() {
	ctx := context.Background()
	store := sessionmap.NewMemory()
	defer store.Close()

	sess := sessionmap.Session{ID: "session-1", Era: era.Legacy, ProtocolVersion: "2025-11-25"}
	if err := store.CreateSession(ctx, sess); err != nil {
		log.Fatal(err)
	}

	ttl := int64(60_000)
	task := sessionmap.Task{
		ID:             "task-1", // a real bridge uses sessionmap.NewTaskID()
		Scope:          sess.Scope(),
		Direction:      sessionmap.LegacyToModern,
		Origin:         sessionmap.OriginUpstreamTask,
		UpstreamTaskID: "upstream-7",
		Method:         "tools/call",
		ToolName:       "render",
		TTLMs:          &ttl,
		Status:         sessionmap.StatusWorking,
	}
	if err := store.CreateTask(ctx, task); err != nil {
		log.Fatal(err)
	}

	got, err := store.GetTask(ctx, sess.Scope(), "task-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("get:", got.ID, got.Status, got.ToolName, *got.TTLMs)

	page, err := store.ListTasks(ctx, sess.Scope(), 10, "")
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range page.Tasks {
		fmt.Println("list:", t.ID, t.Status)
	}
	fmt.Printf("next cursor: %q\n", page.NextCursor)

	_, err = store.GetTask(ctx, sessionmap.Scope{Session: "session-2"}, "task-1")
	fmt.Println("other scope:", err)
	// Output:
	// get: task-1 working render 60000
	// list: task-1 working
	// next cursor: ""
	// other scope: sessionmap: not found
}
