package legacyface_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// lostReplies forwards the first n upstream requests of method to next,
// then answers the bridge 503 as if the reply was lost on the way back
// (the upstream did take the request).
type lostReplies struct {
	next   http.Handler
	method string

	mu   sync.Mutex
	n    int
	seen int
}

func (f *lostReplies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Method") == f.method {
		f.mu.Lock()
		f.seen++
		lose := f.n > 0
		if lose {
			f.n--
		}
		f.mu.Unlock()
		if lose {
			f.next.ServeHTTP(httptest.NewRecorder(), r)
			http.Error(w, "gateway timeout", http.StatusServiceUnavailable)
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

// An input answer the upstream took, whose acknowledgement was lost on the
// way back, is not sent again: the retry first asks the upstream whether
// it still waits for the key (tasks/get), finds it does not, and settles
// the debt (M-30: exactly once). On the old code the outbox sent the
// tasks/update again: a duplicate answer upstream.
func TestInputAnswerNotResentAfterALostAcknowledgement(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	lost := &lostReplies{next: up.rec, method: "tasks/update", n: 1}
	fs := httptest.NewServer(lost)
	t.Cleanup(fs.Close)
	probe := newOutboxProbe()
	br := startBridge(t, up, legacyface.Config{Upstream: fs.URL + "/mcp", Outbox: probe.config()})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	// The client answers round 1 at once and round 2 only when the test is
	// done looking: the task stays input_required (on round 2's key) while
	// the outbox retries round 1's answer.
	var mu sync.Mutex
	asked := 0
	round2 := make(chan struct{})
	c.setHandler(func(string, json.RawMessage) (any, *rpc.Error) {
		mu.Lock()
		asked++
		n := asked
		mu.Unlock()
		if n > 1 {
			<-round2
		}
		return map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}, nil
	})
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "elicit_task",
		"arguments": map[string]any{"question": "Q?", "rounds": 2}, "task": map[string]any{}}))
	res := make(chan *reply, 1)
	go func() { res <- c.call(ctx, "tasks/result", map[string]any{"taskId": id}) }()
	probe.awaitWait(t, ctx) // round 1's tasks/update "failed"
	probe.release <- struct{}{}
	probe.awaitEnd(t, ctx)
	cn := up.srv.Counters()
	lost.mu.Lock()
	seen := lost.seen
	lost.mu.Unlock()
	close(round2)
	if r := <-res; r.Err != nil || !bytes.Contains(r.Result, []byte(`yes`)) {
		t.Fatalf("tasks/result: %s", r.Envelope)
	}
	if cn.InputResponses != 1 || cn.DuplicateKeys != 0 || seen != 1 {
		t.Errorf("round 1: upstream input responses %d, duplicates %d, tasks/update sent %d times; want exactly one",
			cn.InputResponses, cn.DuplicateKeys, seen)
	}
	if rec := owedAnswers(t, br.b.Store(), id); rec.OwedAnswers != nil {
		t.Errorf("record: owed %s; want nothing owed", rec.OwedAnswers)
	}
}
