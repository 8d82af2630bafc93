package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// testListFull: ListTasksFull pages like ListTasks (same order, the same
// cursors in either direction, the scope rule) and each entry is exactly
// GetTask's record, payloads included, so a face needs no read per task.
func testListFull(t *testing.T, e *env) {
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer full"), Session: "s"}
	other := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer other"), Session: "s"}
	for range 7 {
		e.clock.Advance(time.Millisecond)
		e.create(sc)
		e.create(other)
	}
	done := e.create(sc)
	if _, err := e.s.UpdateStatus(e.ctx, sc, done.ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted,
		Result: json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"isError":true}`)}); err != nil {
		t.Fatal(err)
	}
	var viaList, viaFull []string
	for cur, first := "", true; first || cur != ""; first = false {
		p, err := e.s.ListTasks(e.ctx, sc, 3, cur)
		if err != nil {
			t.Fatalf("ListTasks: %v", err)
		}
		viaList, cur = append(viaList, ids(p.Tasks)...), p.NextCursor
	}
	for cur, first := "", true; first || cur != ""; first = false {
		p, err := e.s.ListTasksFull(e.ctx, sc, 3, cur)
		if err != nil {
			t.Fatalf("ListTasksFull: %v", err)
		}
		for _, got := range p.Tasks {
			sameTask(t, e.get(sc, got.ID), got)
		}
		viaFull, cur = append(viaFull, ids(p.Tasks)...), p.NextCursor
	}
	if len(viaList) != 8 || !slices.Equal(viaList, viaFull) {
		t.Fatalf("ListTasksFull pages %v\nListTasks pages     %v", viaFull, viaList)
	}
	// Cursors are interchangeable between the two lists.
	p, err := e.s.ListTasks(e.ctx, sc, 4, "")
	if err != nil {
		t.Fatal(err)
	}
	q, err := e.s.ListTasksFull(e.ctx, sc, 4, p.NextCursor)
	if err != nil || !slices.Equal(ids(q.Tasks), viaList[4:]) {
		t.Fatalf("ListTasksFull after a ListTasks cursor = %v, %v; want %v", ids(q.Tasks), err, viaList[4:])
	}
	if _, err := e.s.ListTasksFull(e.ctx, other, 4, p.NextCursor); err != sessionmap.ErrInvalidCursor {
		t.Fatalf("another scope's cursor: %v, want ErrInvalidCursor (L-51)", err)
	}
}
