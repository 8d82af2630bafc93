package legacyface_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The client's answers to input requests relayed on replica A's tasks/result
// stream are POSTs a load balancer without affinity delivers to replica B,
// which holds no waiter for them: B takes them through the stored question,
// the upstream gets each exactly once, and A's stream ends with the result.
// The same answer from another session is ignored like an unknown id.
func TestInputAnswerOnAnotherReplica(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx, up, brA, brB, c := resumeSetup(t, open)
			id, s, asked := twoQuestions(t, ctx, c, brA.url)
			post := func(cl *rawClient, ev sseEvent) int {
				t.Helper()
				rid, _, _, _ := ev.msg(t)
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid, "result": map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}})
				r, err := cl.post(ctx, b, nil)
				if err != nil {
					t.Fatalf("answer: %v", err)
				}
				return r.Status
			}

			// Another session on B answering with the question's id is not
			// taken: the task's key stays open.
			other := newRawClient(t, brB.url)
			other.initialize(ctx, nil)
			post(other, asked[0])
			adm := brB.b.Store().(sessionmap.Admin)
			if rec, err := adm.LookupTask(context.Background(), id); err != nil || len(rec.AnsweredKeys) != 0 {
				t.Fatalf("after a foreign session's answer: answered keys %v (%v), want none", rec.AnsweredKeys, err)
			}

			c.url = brB.url
			for _, ev := range asked {
				if st := post(c, ev); st != http.StatusAccepted {
					t.Fatalf("answer on replica B: HTTP %d, want 202", st)
				}
			}
			for {
				ev, ok := s.next()
				if !ok {
					t.Fatal("replica A's stream ended without the answer")
				}
				rid, m, _, res := ev.msg(t)
				if m == "elicitation/create" {
					t.Fatalf("a question was presented again after its answer: %s", ev.data)
				}
				if m == "" && string(rid) == "9" {
					if len(res) == 0 {
						t.Fatalf("answer %s", ev.data)
					}
					break
				}
			}
			if cn := up.srv.Counters(); cn.InputResponses != 2 || cn.DuplicateKeys != 0 || cn.UnknownKeys != 0 {
				t.Errorf("upstream input responses %d, duplicates %d, unknown %d; want 2, 0, 0", cn.InputResponses, cn.DuplicateKeys, cn.UnknownKeys)
			}
		})
	}
}
