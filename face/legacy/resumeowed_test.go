package legacyface_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// streamOf is the stream part of an event id ("<stream id>.<n>").
func streamOf(t *testing.T, eventID string) string {
	t.Helper()
	id, _, ok := sessionmap.ParseEventID(eventID)
	if !ok {
		t.Fatalf("malformed event id %q", eventID)
	}
	return id
}

// ownedReplicas starts two replicas sharing a store; ends receives the
// methods of the requests the first one finished (its client's cut
// included), so a test knows the replica saw the cut.
func ownedReplicas(t *testing.T, up *upEnv, open func() sessionmap.Store) (a, b *bridgeEnv, ends chan string) {
	ends = make(chan string, 16)
	hook := func(ev legacyface.RequestEvent) {
		select {
		case ends <- ev.Method:
		default:
		}
	}
	a = startBridge(t, up, legacyface.Config{Store: open(), KeepAlive: 5 * time.Millisecond, Hooks: legacyface.Hooks{Request: hook}})
	b = startBridge(t, up, legacyface.Config{Store: open(), KeepAlive: 5 * time.Millisecond})
	return a, b, ends
}

func waitEnd(t *testing.T, ctx context.Context, ends chan string, method string) {
	t.Helper()
	for {
		select {
		case m := <-ends:
			if m == method {
				return
			}
		case <-ctx.Done():
			t.Fatalf("the bridge never saw the %s end", method)
		}
	}
}

// A tasks/result stream is cut mid-wait; the client reconnects with a GET
// that names no stream (no Last-Event-ID) on another replica: that GET
// resumes the broken stream (its events from the start, the transport's
// resumption of a stream of an earlier request), the task completes and the
// answer arrives there under the original request id — once: a GET after it
// is the session's listening stream, not a replay.
func TestGETWithoutLastEventIDGetsTheOwedAnswer(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t, 30*time.Second)
			up := startUpstream(t, demo.Options{})
			brA, brB, ends := ownedReplicas(t, up, open)
			c := newRawClient(t, brA.url)
			c.initialize(ctx, nil)

			id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "owed"}, "task": map[string]any{}}))
			s := openSSE(t, ctx, c, brA.url, rpcBody(91, "tasks/result", map[string]any{"taskId": id}), "")
			cutStream := streamOf(t, s.prime())
			s.cut()
			waitEnd(t, ctx, ends, legacy.MethodTasksResult)

			g := openSSE(t, ctx, c, brB.url, nil, "")
			if g.status != http.StatusOK || g.sc == nil {
				t.Fatalf("GET without Last-Event-ID: HTTP %d %s", g.status, g.body)
			}
			if got := streamOf(t, g.prime()); got != cutStream {
				t.Fatalf("GET without Last-Event-ID started stream %s, want the broken tasks/result stream %s resumed", got, cutStream)
			}
			up.srv.CompleteNow(upstreamTaskID(t, brA.b.Store(), id))
			g.answer("91", "owed")

			// Delivered once: the next GET is a listening stream of its own.
			again := openSSE(t, ctx, c, brB.url, nil, "")
			if again.status != http.StatusOK || again.sc == nil {
				t.Fatalf("GET after the answer: HTTP %d %s", again.status, again.body)
			}
			if got := streamOf(t, again.prime()); got == cutStream {
				t.Fatal("a GET after the answer went out resumed the answered stream again")
			}
		})
	}
}

// The TypeScript SDK's path: the tasks/result stream is cut, the client
// resumes it with Last-Event-ID on a second replica, and that resumed
// stream is cut before the client read an event id, so the SDK reconnects
// without Last-Event-ID (here to the first replica). The second replica
// releases the stream when its client goes; the GET resumes it and gets
// the answer, under the original id, once.
func TestResumedStreamCutThenGETWithoutLastEventIDGetsTheAnswer(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t, 30*time.Second)
			up := startUpstream(t, demo.Options{})
			brA, brB, ends := ownedReplicas(t, up, open)
			c := newRawClient(t, brA.url)
			c.initialize(ctx, nil)

			id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "twice cut"}, "task": map[string]any{}}))
			s := openSSE(t, ctx, c, brA.url, rpcBody(92, "tasks/result", map[string]any{"taskId": id}), "")
			primeID := s.prime()
			s.cut()
			waitEnd(t, ctx, ends, legacy.MethodTasksResult)

			r := openSSE(t, ctx, c, brB.url, nil, primeID)
			if r.status != http.StatusOK || r.sc == nil {
				t.Fatalf("resume: HTTP %d %s", r.status, r.body)
			}
			r.cut() // broken before the client read its first event

			g := openSSE(t, ctx, c, brA.url, nil, "")
			if g.status != http.StatusOK || g.sc == nil {
				t.Fatalf("GET without Last-Event-ID: HTTP %d %s", g.status, g.body)
			}
			if got := streamOf(t, g.prime()); got != streamOf(t, primeID) {
				t.Fatalf("GET without Last-Event-ID started stream %s, want the broken stream %s", got, streamOf(t, primeID))
			}
			up.srv.CompleteNow(upstreamTaskID(t, brA.b.Store(), id))
			ev := g.answer("92", "twice cut")
			if !strings.HasPrefix(ev.id, streamOf(t, primeID)+".") {
				t.Fatalf("answer event id %q is not of the resumed stream", ev.id)
			}
			again := openSSE(t, ctx, c, brB.url, nil, "")
			if again.status != http.StatusOK || again.sc == nil {
				t.Fatalf("GET after the answer: HTTP %d %s", again.status, again.body)
			}
			if got := streamOf(t, again.prime()); got == streamOf(t, primeID) {
				t.Fatal("a GET after the answer went out resumed the answered stream again")
			}
		})
	}
}

// A broken stream another replica holds is not taken from it: a GET
// without Last-Event-ID leaves a stream whose holder keeps its lease alone
// (it is then the session's listening stream), and resumes it once the
// holder's lease ran out — a replica killed under a resumed stream neither
// answers nor releases it.
func TestGETWithoutLastEventIDWaitsOutADeadHoldersLease(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t, 30*time.Second)
			up := startUpstream(t, demo.Options{})
			brA, brB, ends := ownedReplicas(t, up, open)
			c := newRawClient(t, brA.url)
			c.initialize(ctx, nil)

			id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "leased"}, "task": map[string]any{}}))
			s := openSSE(t, ctx, c, brA.url, rpcBody(93, "tasks/result", map[string]any{"taskId": id}), "")
			cutStream := streamOf(t, s.prime())
			s.cut()
			waitEnd(t, ctx, ends, legacy.MethodTasksResult)

			adm, ok := brA.b.Store().(sessionmap.Admin)
			idx, ok2 := brA.b.Store().(sessionmap.StreamIndex)
			if !ok || !ok2 {
				t.Fatal("the store has no Admin view or no stream index")
			}
			rec, err := adm.LookupTask(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			// Another replica resumed the stream and holds it.
			const other = "another replica"
			if err := idx.OweStream(ctx, rec.Scope, cutStream, other, time.Minute, time.Minute); err != nil {
				t.Fatal(err)
			}
			g := openSSE(t, ctx, c, brB.url, nil, "")
			if g.status != http.StatusOK || g.sc == nil {
				t.Fatalf("GET without Last-Event-ID: HTTP %d %s", g.status, g.body)
			}
			if got := streamOf(t, g.prime()); got == cutStream {
				t.Fatal("a GET without Last-Event-ID took a stream another replica holds")
			}
			g.cut()

			// That replica is killed: its lease runs out unrenewed.
			if err := idx.OweStream(ctx, rec.Scope, cutStream, other, 300*time.Millisecond, time.Minute); err != nil {
				t.Fatal(err)
			}
			r := openSSE(t, ctx, c, brB.url, nil, "")
			if r.status != http.StatusOK || r.sc == nil {
				t.Fatalf("GET without Last-Event-ID: HTTP %d %s", r.status, r.body)
			}
			if got := streamOf(t, r.prime()); got != cutStream {
				t.Fatalf("GET without Last-Event-ID started stream %s, want the dead holder's stream %s", got, cutStream)
			}
			up.srv.CompleteNow(upstreamTaskID(t, brA.b.Store(), id))
			r.answer("93", "leased")
		})
	}
}
