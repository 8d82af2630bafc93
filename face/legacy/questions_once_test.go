package legacyface_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// stallingStore stalls OweAnswers (the write that records a client's input
// answer) until release is closed, as a Redis failover stalls every write,
// and reports each recording of a question.
type stallingStore struct {
	sessionmap.Store
	stalled   chan struct{} // closed when an OweAnswers call is held
	release   chan struct{}
	once      sync.Once
	questions chan struct{} // one value per question record written (or found)
}

func (s *stallingStore) OweAnswers(ctx context.Context, sc sessionmap.Scope, id string, answers map[string]json.RawMessage) ([]string, error) {
	s.once.Do(func() { close(s.stalled) })
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Store.OweAnswers(ctx, sc, id, answers)
}

func (s *stallingStore) CreateSession(ctx context.Context, sess sessionmap.Session) error {
	err := s.Store.CreateSession(ctx, sess)
	if strings.HasPrefix(sess.ID, "legacy-question-") {
		s.questions <- struct{}{}
	}
	return err
}

// A question replica A showed on a stream that broke is answered by the
// client with a POST that replica B takes and whose write stalls in the
// store (a failover); meanwhile the client waits on the task again with a
// new tasks/result on replica C. The question is not shown a second time:
// the new wait finds it shown before and gives the answer in flight time to
// land (questionGrace), and the answer does land. On the old code the new
// wait presented it again at once: the chaos runs' "input questions
// presented again".
func TestAnsweredQuestionNotPresentedAgainWhileItsAnswerStalls(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	st := &stallingStore{Store: sessionmap.NewMemory(), stalled: make(chan struct{}), release: make(chan struct{}),
		questions: make(chan struct{}, 8)}
	br := startBridge(t, up, legacyface.Config{Store: st})
	brB := startBridge(t, up, legacyface.Config{Store: st})
	brC := startBridge(t, up, legacyface.Config{Store: st})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Q?"}, "task": map[string]any{}}))

	s1 := openSSE(t, ctx, c, br.url, rpcBody(5, "tasks/result", map[string]any{"taskId": id}), "")
	var asked sseEvent
	for {
		ev, ok := s1.message()
		if !ok {
			t.Fatal("first stream ended before the question")
		}
		if _, m, _, _ := ev.msg(t); m == "elicitation/create" {
			asked = ev
			break
		}
	}
	<-st.questions
	s1.cut()

	// The client's answer reaches replica B; its write stalls.
	c.url = brB.url
	rid, _, _, _ := asked.msg(t)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid, "result": map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}})
	posted := make(chan int, 1)
	go func() {
		r, err := c.post(ctx, body, nil)
		if err != nil {
			posted <- 0
			return
		}
		posted <- r.Status
	}()
	select {
	case <-st.stalled:
	case <-ctx.Done():
		t.Fatal("the answer never reached the store")
	}

	// The client waits on the task again: the wait meets the question it
	// showed before, while the answer is still stalled.
	s2 := openSSE(t, ctx, c, brC.url, rpcBody(6, "tasks/result", map[string]any{"taskId": id}), "")
	select {
	case <-st.questions:
	case <-ctx.Done():
		t.Fatal("the second wait never considered the question")
	}
	close(st.release)
	if code := <-posted; code != http.StatusAccepted {
		t.Fatalf("answer POST: HTTP %d, want 202", code)
	}
	for {
		ev, ok := s2.message()
		if !ok {
			t.Fatal("second stream ended without the result")
		}
		rid, m, _, res := ev.msg(t)
		if m == "elicitation/create" {
			t.Fatalf("the question was presented again while its answer was in flight: %s", ev.data)
		}
		if m == "" && string(rid) == "6" {
			if !strings.Contains(string(res), "yes") {
				t.Fatalf("result %s", ev.data)
			}
			break
		}
	}
	if cn := up.srv.Counters(); cn.InputResponses != 1 || cn.DuplicateKeys != 0 {
		t.Errorf("upstream input responses %d, duplicates %d; want exactly one", cn.InputResponses, cn.DuplicateKeys)
	}
}
