package sessionmap_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// eventStoreContract checks one EventStore: events replay after the given
// id and only the stream's own, a foreign scope or a malformed or unknown id
// answer alike (ErrNotFound), and the record keeps the task a stream serves.
func eventStoreContract(t *testing.T, es sessionmap.EventStore) {
	ctx := context.Background()
	const ttl = time.Minute
	a := sessionmap.Scope{Principal: "p1", Session: "s1"}
	recA := sessionmap.StreamRecord{ID: "streamAAAAAAAAAAAAAAAAAAAAAA", Scope: a, Method: "tasks/result",
		Params: []byte(`{"taskId":"t1"}`), RequestID: []byte(`7`)}
	recB := sessionmap.StreamRecord{ID: "streamBBBBBBBBBBBBBBBBBBBBBB", Scope: a, Method: "tools/call", RequestID: []byte(`8`)}
	for _, r := range []sessionmap.StreamRecord{recA, recB} {
		if err := es.OpenStream(ctx, r, ttl); err != nil {
			t.Fatalf("OpenStream: %v", err)
		}
	}
	var ids []string
	for _, d := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		id, err := es.AppendEvent(ctx, recA.ID, []byte(d), ttl)
		if err != nil {
			t.Fatalf("AppendEvent: %v", err)
		}
		ids = append(ids, id)
		if _, err := es.AppendEvent(ctx, recB.ID, []byte(`{"other":true}`), ttl); err != nil {
			t.Fatalf("AppendEvent B: %v", err)
		}
	}
	if ids[0] == ids[1] || ids[0] != sessionmap.EventID(recA.ID, 1) {
		t.Fatalf("event ids %v", ids)
	}
	// From the priming id: everything of stream A, nothing of B.
	rec, evs, err := es.EventsAfter(ctx, a, sessionmap.EventID(recA.ID, 0))
	if err != nil || rec.Method != "tasks/result" || string(rec.RequestID) != "7" || len(evs) != 3 || string(evs[2].Data) != `{"n":3}` {
		t.Fatalf("EventsAfter(prime) = %+v %q %v", rec, evs, err)
	}
	// After event 2: only event 3.
	_, evs, err = es.EventsAfter(ctx, a, ids[1])
	if err != nil || len(evs) != 1 || evs[0].ID != ids[2] || string(evs[0].Data) != `{"n":3}` {
		t.Fatalf("EventsAfter(2) = %q %v", evs, err)
	}
	_, evs, err = es.EventsAfter(ctx, a, ids[2])
	if err != nil || len(evs) != 0 {
		t.Fatalf("EventsAfter(last) = %q %v", evs, err)
	}
	if err := es.SetStreamTask(ctx, recB.ID, "task-9", ttl); err != nil {
		t.Fatalf("SetStreamTask: %v", err)
	}
	if rec, _, err := es.EventsAfter(ctx, a, sessionmap.EventID(recB.ID, 0)); err != nil || rec.TaskID != "task-9" {
		t.Fatalf("record after SetStreamTask = %+v %v", rec, err)
	}
	for name, c := range map[string]struct {
		sc sessionmap.Scope
		id string
	}{
		"other session":   {sessionmap.Scope{Principal: "p1", Session: "s2"}, ids[0]},
		"other principal": {sessionmap.Scope{Principal: "p2", Session: "s1"}, ids[0]},
		"unknown stream":  {a, sessionmap.EventID("streamCCCCCCCCCCCCCCCCCCCCCC", 0)},
		"beyond the end":  {a, sessionmap.EventID(recA.ID, 9)},
		"malformed":       {a, "no-dot"},
	} {
		if _, _, err := es.EventsAfter(ctx, c.sc, c.id); !errors.Is(err, sessionmap.ErrNotFound) {
			t.Errorf("%s: err = %v, want ErrNotFound", name, err)
		}
	}
	if _, err := es.AppendEvent(ctx, "streamCCCCCCCCCCCCCCCCCCCCCC", []byte(`{}`), ttl); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Errorf("AppendEvent to an unknown stream: %v", err)
	}

	// A stream keeps its newest MaxStreamEvents: a resume from before them
	// is refused whole, never replayed with a hole.
	recL := sessionmap.StreamRecord{ID: "streamLLLLLLLLLLLLLLLLLLLLLL", Scope: a, Method: "GET"}
	if err := es.OpenStream(ctx, recL, ttl); err != nil {
		t.Fatal(err)
	}
	const extra = 5
	for i := 0; i < sessionmap.MaxStreamEvents+extra; i++ {
		if _, err := es.AppendEvent(ctx, recL.ID, []byte(`{}`), ttl); err != nil {
			t.Fatal(err)
		}
	}
	_, evs, err = es.EventsAfter(ctx, a, sessionmap.EventID(recL.ID, extra))
	if err != nil || len(evs) != sessionmap.MaxStreamEvents || evs[0].ID != sessionmap.EventID(recL.ID, extra+1) {
		t.Fatalf("after the oldest dropped event: %d events, first %v, %v", len(evs), evs[:min(1, len(evs))], err)
	}
	for _, n := range []int64{0, extra - 1} {
		if _, _, err := es.EventsAfter(ctx, a, sessionmap.EventID(recL.ID, n)); !errors.Is(err, sessionmap.ErrNotFound) {
			t.Errorf("resume from %d, before the kept events: %v, want ErrNotFound", n, err)
		}
	}
}

func TestEventStoreMemory(t *testing.T) { eventStoreContract(t, sessionmap.NewMemoryEvents()) }

func TestEventStoreMemoryStore(t *testing.T) { eventStoreContract(t, sessionmap.NewMemory()) }

func TestEventStoreRedis(t *testing.T) {
	srv := redistest.Start(t)
	st := openRedis(t, sessionmap.RedisConfig{URL: srv.URL, Prefix: srv.Prefix(t)})
	defer st.Close()
	eventStoreContract(t, st)
}

// Streams expire ttl after their last write.
func TestEventStoreExpires(t *testing.T) {
	now := time.Unix(1000, 0)
	st := sessionmap.NewMemory(sessionmap.WithClock(func() time.Time { return now }))
	sc := sessionmap.Scope{Session: "s"}
	ctx := context.Background()
	if err := st.OpenStream(ctx, sessionmap.StreamRecord{ID: "x", Scope: sc, RequestID: []byte(`1`)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.EventsAfter(ctx, sc, "x.0"); err != nil {
		t.Fatalf("live stream: %v", err)
	}
	now = now.Add(time.Minute)
	if _, _, err := st.EventsAfter(ctx, sc, "x.0"); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Fatalf("expired stream: %v", err)
	}
}

// A parked wait keeps its stream's record for as long as it waits, with no
// event yet: about 180 B of heap each in the memory store (the record, its
// expiry and the table's slot; 220 B when every stream carried its event
// list and a time.Time).
func TestMemoryStreamRecordHeap(t *testing.T) {
	const n = 5000
	m := sessionmap.NewMemoryEvents()
	ctx := context.Background()
	recs := make([]sessionmap.StreamRecord, n)
	sc := sessionmap.Scope{Principal: "p", Session: "s"}
	for i := range recs {
		recs[i] = sessionmap.StreamRecord{ID: fmt.Sprintf("stream-%08d", i), Scope: sc, Method: "tasks/result", RequestID: json.RawMessage("1")}
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, rec := range recs {
		if err := m.OpenStream(ctx, rec, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(m)
	runtime.KeepAlive(recs)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("an open stream without events keeps %d B", per)
	if limit := int64(200); per > limit {
		t.Errorf("an open stream without events keeps %d B of heap, want ≤ %d", per, limit)
	}
	id, err := m.AppendEvent(ctx, recs[7].ID, []byte(`{"x":1}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, evs, err := m.EventsAfter(ctx, sc, recs[7].ID+".0"); err != nil || len(evs) != 1 || evs[0].ID != id {
		t.Fatalf("EventsAfter = %v, %v; want the one event %s", evs, err, id)
	}
}
