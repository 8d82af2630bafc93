package legacyface_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
)

// A replica dies under a blocked tasks/result; its resumed stream on a
// second replica breaks before the client read its first event, so the
// client (as the TypeScript SDK does) reconnects without Last-Event-ID — to
// the replica where its own standalone GET stream is open. That GET is
// served as an event stream of its own (primed with an id, resumable), not
// 409 Conflict; server messages stay on the first stream (sent once), and
// the wait's answer is still there for a resume with the stream's id.
func TestSecondGETWithoutLastEventIDIsServed(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t, 30*time.Second)
			up := startUpstream(t, demo.Options{})
			brA := startBridge(t, up, legacyface.Config{Store: open(), StatusNotifications: true})
			brB := startBridge(t, up, legacyface.Config{Store: open(), StatusNotifications: true, KeepAlive: 5 * time.Millisecond})
			c := newRawClient(t, brA.url)
			c.initialize(ctx, nil)

			// The client's standalone stream, on the second replica.
			g := openSSE(t, ctx, c, brB.url, nil, "")
			if g.sc == nil {
				t.Fatalf("GET: HTTP %d %s", g.status, g.body)
			}
			g.prime()
			c.url = brB.url // the client's calls go to the second replica too

			id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "kept"}, "task": map[string]any{}}))
			s := openSSE(t, ctx, c, brA.url, rpcBody(91, "tasks/result", map[string]any{"taskId": id}), "")
			primeID := s.prime()
			s.cut() // the first replica is gone

			r := openSSE(t, ctx, c, brB.url, nil, primeID)
			if r.status != http.StatusOK || r.sc == nil {
				t.Fatalf("resume: HTTP %d %s", r.status, r.body)
			}
			r.cut() // broken again before the client read an event id

			// Reconnected without Last-Event-ID while the standalone stream
			// is open on this replica.
			second := openSSE(t, ctx, c, brB.url, nil, "")
			if second.status != http.StatusOK || second.sc == nil {
				t.Fatalf("second GET without Last-Event-ID: HTTP %d %s, want an event stream", second.status, second.body)
			}
			secondID := second.prime()
			second.cut()
			// Its own id resumes it, still beside the first stream.
			again := openSSE(t, ctx, c, brB.url, nil, secondID)
			if again.status != http.StatusOK || again.sc == nil {
				t.Fatalf("resuming the second GET stream: HTTP %d %s", again.status, again.body)
			}

			// The task ends: its status goes out on the first stream.
			up.srv.CompleteNow(upstreamTaskID(t, brA.b.Store(), id))
			for {
				ev, ok := g.next()
				if !ok {
					t.Fatal("the standalone stream ended before the task's status")
				}
				if bytes.Contains(ev.data, []byte(`"completed"`)) {
					break
				}
			}
			// And the wait's answer is not lost: resuming its stream gets it.
			res := openSSE(t, ctx, c, brA.url, nil, primeID)
			if res.status != http.StatusOK || res.sc == nil {
				t.Fatalf("resume after completion: HTTP %d %s", res.status, res.body)
			}
			res.answer("91", "kept")
		})
	}
}
