package router

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"unsafe"
)

// A response taken over by a parked wait keeps no parser while it waits
// (nor the buffers a pooled parser grew to for earlier answers): only the
// bytes between two events need one, and a parked wait's stream carries
// keep-alive comments until its answer. The answer is still observed,
// whole, however it is split.
func TestDetachedResponseKeepsNoParser(t *testing.T) {
	const n = 2000
	var got []string
	onMsg := func(b []byte) { got = append(got, string(b)) }
	sws := make([]*sniffWriter, n)
	observes := make([]func([]byte), n)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range sws {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "text/event-stream")
		sw := &sniffWriter{w: rec, onMsg: onMsg}
		sw.WriteHeader(http.StatusOK)
		if _, err := sw.Write([]byte("id: 1\ndata: \n\n: primed\n\n")); err != nil {
			t.Fatal(err)
		}
		sws[i] = sw
		observes[i], _ = sw.DetachResponse()
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(sws)
	runtime.KeepAlive(observes)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("a detached response keeps %d B", per)
	if limit := int64(120); per > limit {
		t.Errorf("a detached response keeps %d B of heap, want ≤ %d (its writer and two funcs, no parser)", per, limit)
	}
	sw, observe := sws[0], observes[0]
	if sw.p != nil {
		t.Fatal("a detached response between events kept its parser")
	}
	observe([]byte(": keep-alive\n\n"))
	observe([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,"))
	if sw.p == nil {
		t.Fatal("a detached response in the middle of an event let go of its parser")
	}
	observe([]byte("\"result\":{}}\n\n"))
	if len(got) != 1 || got[0] != `{"jsonrpc":"2.0","id":1,"result":{}}` || sw.p != nil {
		t.Fatalf("answers observed %q (parser kept: %v)", got, sw.p != nil)
	}
	if status, overflow := sw.finish(); status != http.StatusOK || overflow {
		t.Fatalf("finish = %d, %v", status, overflow)
	}
}

// A long-lived stream's parser (an upstream subscriptions/listen, whose
// acknowledgement lists up to a thousand task ids) keeps no buffer sized
// for its largest message between messages; the message itself is
// observed whole, split across reads or not.
func TestParserLetsGoOfLargeBuffers(t *testing.T) {
	var got []int
	p := newMsgParser("text/event-stream", func(b []byte) { got = append(got, len(b)) })
	big := make([]byte, 40<<10)
	for i := range big {
		big[i] = 'x'
	}
	ev := append(append([]byte("data: "), big...), "\n\n"...)
	p.feed(ev)
	p.feed(ev[:100])
	p.feed(ev[100:])
	if len(got) != 2 || got[0] != len(big) || got[1] != len(big) {
		t.Fatalf("messages of %v B, want two of %d", got, len(big))
	}
	if cap(p.buf) > keepBuf || cap(p.data) > keepBuf {
		t.Errorf("between messages the parser keeps %d + %d B of buffers, want ≤ %d each", cap(p.buf), cap(p.data), keepBuf)
	}
	p.feed([]byte("data: {}\n\n"))
	if len(got) != 3 || got[2] != 2 {
		t.Errorf("a small message after the large ones: %v", got)
	}
}

// A parked wait keeps its request's httpCall until the answer: one object
// in the allocator's 352-byte class (the writer, exchange and closures it
// replaced were about 500 bytes in six).
func TestHTTPCallSize(t *testing.T) {
	if n := unsafe.Sizeof(httpCall{}); n > 352 {
		t.Errorf("httpCall is %d bytes, want ≤ 352", n)
	}
}
