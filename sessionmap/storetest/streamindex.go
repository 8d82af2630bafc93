package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// testStreamIndex checks the stream index (sessionmap.StreamIndex) of a
// store that keeps resumable streams: one holder at a time, a lease that
// runs out, release and settle, scoping, order, the bound and expiry. A
// store without streams (Badger: a bridge on it keeps them in process
// memory) skips it.
func testStreamIndex(t *testing.T, e *env) {
	idx, ok := e.s.(sessionmap.StreamIndex)
	if !ok {
		t.Skip("this store keeps no resumable streams; the bridge keeps them, and their index, in process memory")
	}
	const lease, ttl = 2 * time.Second, time.Minute
	sc := sessionmap.Scope{Principal: "p1", Session: "sess-index"}
	other := sessionmap.Scope{Principal: "p2", Session: "sess-index"} // same session id, another principal
	if got, err := idx.OwedStreams(e.ctx, sc); err != nil || len(got) != 0 {
		t.Fatalf("OwedStreams of a new session = %+v, %v", got, err)
	}
	if err := idx.OweStream(e.ctx, sc, "stream-1", "A", lease, ttl); err != nil {
		t.Fatalf("OweStream: %v", err)
	}
	e.clock.Advance(time.Millisecond)
	if err := idx.OweStream(e.ctx, sc, "stream-2", "A", lease, ttl); err != nil {
		t.Fatalf("OweStream: %v", err)
	}
	got, err := idx.OwedStreams(e.ctx, sc)
	if err != nil || len(got) != 2 || got[0].StreamID != "stream-1" || got[1].StreamID != "stream-2" || got[0].Holder != "A" {
		t.Fatalf("OwedStreams = %+v, %v; want stream-1 then stream-2, held by A", got, err)
	}
	if got[0].Free(e.clock.Now()) {
		t.Fatalf("a held entry is free: %+v", got[0])
	}
	// Another principal sees nothing and claims nothing.
	if o, err := idx.OwedStreams(e.ctx, other); err != nil || len(o) != 0 {
		t.Fatalf("another principal's OwedStreams = %+v, %v", o, err)
	}
	if ok, err := idx.ClaimOwed(e.ctx, other, "stream-1", "X", lease); err != nil || ok {
		t.Fatalf("another principal claimed: %v %v", ok, err)
	}
	// Held: B cannot take it; A renews it.
	if ok, err := idx.ClaimOwed(e.ctx, sc, "stream-1", "B", lease); err != nil || ok {
		t.Fatalf("B claimed a stream A holds: %v %v", ok, err)
	}
	if ok, err := idx.ClaimOwed(e.ctx, sc, "stream-1", "A", lease); err != nil || !ok {
		t.Fatalf("A could not renew: %v %v", ok, err)
	}
	// The lease runs out (A died): B takes it, and A no longer can.
	e.clock.Advance(lease)
	if ok, err := idx.ClaimOwed(e.ctx, sc, "stream-1", "B", lease); err != nil || !ok {
		t.Fatalf("B could not claim an expired lease: %v %v", ok, err)
	}
	if ok, err := idx.ClaimOwed(e.ctx, sc, "stream-1", "A", lease); err != nil || ok {
		t.Fatalf("A renewed a lease B took over: %v %v", ok, err)
	}
	// Release by a non-holder does nothing; by the holder frees it at once.
	if err := idx.ReleaseOwed(e.ctx, sc, "stream-1", "A"); err != nil {
		t.Fatalf("ReleaseOwed: %v", err)
	}
	if ok, _ := idx.ClaimOwed(e.ctx, sc, "stream-1", "C", lease); ok {
		t.Fatal("a release by a former holder freed the stream")
	}
	if err := idx.ReleaseOwed(e.ctx, sc, "stream-1", "B"); err != nil {
		t.Fatalf("ReleaseOwed: %v", err)
	}
	if got, _ := idx.OwedStreams(e.ctx, sc); len(got) != 2 || !got[0].Free(e.clock.Now()) {
		t.Fatalf("after release: %+v, want stream-1 free and still owed", got)
	}
	if ok, err := idx.ClaimOwed(e.ctx, sc, "stream-1", "C", lease); err != nil || !ok {
		t.Fatalf("C could not claim a released stream: %v %v", ok, err)
	}
	// OweStream (the client named the stream) takes it whoever holds it.
	if err := idx.OweStream(e.ctx, sc, "stream-1", "D", lease, ttl); err != nil {
		t.Fatalf("OweStream over a holder: %v", err)
	}
	if got, _ := idx.OwedStreams(e.ctx, sc); got[0].Holder != "D" || got[0].StreamID != "stream-1" {
		t.Fatalf("after OweStream by D: %+v (order must keep the first indexing time)", got)
	}
	// Another principal cannot index a stream id of this one.
	if err := idx.OweStream(e.ctx, other, "stream-1", "X", lease, ttl); err == nil {
		t.Fatal("another principal indexed this principal's stream")
	}
	// Settled by its holder: gone, and no longer claimable. Another
	// principal's settle, and a former holder's, do nothing.
	if err := idx.SettleOwed(e.ctx, other, "stream-2", "A"); err != nil {
		t.Fatalf("SettleOwed: %v", err)
	}
	if err := idx.SettleOwed(e.ctx, sc, "stream-1", "C"); err != nil {
		t.Fatalf("SettleOwed: %v", err)
	}
	if got, _ := idx.OwedStreams(e.ctx, sc); len(got) != 2 {
		t.Fatalf("a former holder's settle removed an entry: %+v", got)
	}
	if err := idx.SettleOwed(e.ctx, sc, "stream-1", "D"); err != nil {
		t.Fatalf("SettleOwed: %v", err)
	}
	if got, _ := idx.OwedStreams(e.ctx, sc); len(got) != 1 || got[0].StreamID != "stream-2" {
		t.Fatalf("after settle: %+v, want only stream-2", got)
	}
	if ok, _ := idx.ClaimOwed(e.ctx, sc, "stream-1", "E", lease); ok {
		t.Fatal("a settled stream was claimed")
	}
	// Settled for good: a replica that notices late that the client left
	// it, or one the client names it to, does not make it owed again.
	for _, h := range []string{"", "F"} {
		if err := idx.OweStream(e.ctx, sc, "stream-1", h, lease, ttl); err != nil {
			t.Fatalf("OweStream(%q) of a settled stream: %v", h, err)
		}
		if got, _ := idx.OwedStreams(e.ctx, sc); len(got) != 1 || got[0].StreamID != "stream-2" {
			t.Fatalf("after OweStream(%q) of a settled stream: %+v, want only stream-2", h, got)
		}
	}
	// A client that left (holder "") indexes a new stream free, and does
	// not take a held one from its holder.
	if err := idx.OweStream(e.ctx, sc, "stream-3", "", lease, ttl); err != nil {
		t.Fatalf("OweStream(free): %v", err)
	}
	if err := idx.OweStream(e.ctx, sc, "stream-2", "", lease, ttl); err != nil {
		t.Fatalf("OweStream(free) of a held stream: %v", err)
	}
	got, _ = idx.OwedStreams(e.ctx, sc)
	if len(got) != 2 || got[0].StreamID != "stream-2" || got[0].Holder != "A" || got[1].StreamID != "stream-3" || !got[1].Free(e.clock.Now()) {
		t.Fatalf("after a free indexing: %+v; want stream-2 still held by A, stream-3 free", got)
	}
	if err := idx.SettleOwed(e.ctx, sc, "stream-3", ""); err != nil {
		t.Fatalf("SettleOwed: %v", err)
	}
	if ok, err := idx.ClaimOwed(e.ctx, sc, "stream-3", "G", lease); err != nil || !ok {
		t.Fatalf("a free stream settled by nobody was not claimable: %v %v", ok, err)
	}
	if err := idx.SettleOwed(e.ctx, sc, "stream-3", "G"); err != nil {
		t.Fatalf("SettleOwed: %v", err)
	}
	// Bounded: the oldest go first.
	for i := range sessionmap.MaxOwedStreams + 3 {
		e.clock.Advance(time.Millisecond)
		if err := idx.OweStream(e.ctx, sc, fmt.Sprintf("bulk-%02d", i), "A", lease, ttl); err != nil {
			t.Fatalf("OweStream %d: %v", i, err)
		}
	}
	got, _ = idx.OwedStreams(e.ctx, sc)
	if len(got) != sessionmap.MaxOwedStreams || got[len(got)-1].StreamID != fmt.Sprintf("bulk-%02d", sessionmap.MaxOwedStreams+2) {
		t.Fatalf("after %d more: %d listed, last %+v; want the newest %d", sessionmap.MaxOwedStreams+3, len(got), got[len(got)-1], sessionmap.MaxOwedStreams)
	}
	for _, o := range got {
		if o.StreamID == "stream-2" || o.StreamID == "bulk-00" {
			t.Fatalf("the oldest entry %s was kept beyond the bound", o.StreamID)
		}
	}
	// Expiry: ttl after the last write, nothing is owed.
	e.clock.Advance(ttl)
	if got, err := idx.OwedStreams(e.ctx, sc); err != nil || len(got) != 0 {
		t.Fatalf("after the ttl: %+v, %v", got, err)
	}
	if ok, _ := idx.ClaimOwed(e.ctx, sc, fmt.Sprintf("bulk-%02d", sessionmap.MaxOwedStreams+2), "F", lease); ok {
		t.Fatal("an expired entry was claimed")
	}
}
