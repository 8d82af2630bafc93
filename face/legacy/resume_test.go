package legacyface_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// sseStream reads one event stream by hand, so a test decides when to
// answer and when to cut the connection.
type sseStream struct {
	t      *testing.T
	status int
	body   []byte // the body of a non-stream answer
	sc     *bufio.Scanner
	cancel context.CancelFunc
	resp   *http.Response
}

type sseEvent struct {
	id   string
	data []byte
}

// openSSE POSTs a request (body non-nil) or GETs with Last-Event-ID to url
// for c's session.
func openSSE(t *testing.T, ctx context.Context, c *rawClient, url string, body []byte, lastID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	method := http.MethodPost
	var rd io.Reader
	if body == nil {
		method = http.MethodGet
	} else {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	c.headers(req.Header)
	if body == nil {
		req.Header.Del("Content-Type")
		req.Header.Set("Accept", "text/event-stream")
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("%s: %v", method, err)
	}
	s := &sseStream{t: t, status: resp.StatusCode, cancel: cancel, resp: resp}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		s.body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return s
	}
	s.sc = bufio.NewScanner(resp.Body)
	s.sc.Buffer(make([]byte, 64*1024), 16<<20)
	t.Cleanup(s.cut)
	return s
}

// cut drops the connection (the client side of a broken stream).
func (s *sseStream) cut() {
	s.cancel()
	if s.resp != nil {
		s.resp.Body.Close()
	}
}

// next returns the next event (comments skipped); ok is false at the end of
// the stream.
func (s *sseStream) next() (ev sseEvent, ok bool) {
	s.t.Helper()
	has := false
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id:"):
			ev.id, has = strings.TrimSpace(strings.TrimPrefix(line, "id:")), true
		case strings.HasPrefix(line, "data:"):
			ev.data = append(ev.data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
			has = true
		case line == "" && has:
			return ev, true
		}
	}
	return ev, false
}

// message returns the next event that carries a message (a resumed
// stream's first event, an id without data, is skipped).
func (s *sseStream) message() (ev sseEvent, ok bool) {
	s.t.Helper()
	for {
		if ev, ok = s.next(); !ok || len(ev.data) > 0 {
			return ev, ok
		}
	}
}

// answer reads the next message, which must be the answer to request id
// holding text.
func (s *sseStream) answer(id, text string) sseEvent {
	s.t.Helper()
	ev, ok := s.message()
	if !ok {
		s.t.Fatal("resumed stream ended without the answer")
	}
	if rid, _, _, res := ev.msg(s.t); string(rid) != id || !bytes.Contains(res, []byte(`"`+text+`"`)) {
		s.t.Fatalf("resumed answer %s, want id %s with %q", ev.data, id, text)
	}
	return ev
}

// msg decodes an event's JSON-RPC message.
func (e sseEvent) msg(t *testing.T) (id json.RawMessage, method string, params, result json.RawMessage) {
	t.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(e.data, &m); err != nil {
		t.Fatalf("event data is not JSON: %s", e.data)
	}
	return m.ID, m.Method, m.Params, m.Result
}

func rpcBody(id int, method string, params any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return b
}

// prime reads the priming event: an id and no data.
func (s *sseStream) prime() string {
	s.t.Helper()
	ev, ok := s.next()
	if !ok || ev.id == "" || len(ev.data) != 0 {
		s.t.Fatalf("stream did not start with a priming event (id, no data): %+v %v", ev, ok)
	}
	return ev.id
}

// twoReplicas starts two bridges sharing one store each build opens.
func twoReplicas(t *testing.T, up *upEnv, open func() sessionmap.Store) (a, b *bridgeEnv) {
	a = startBridge(t, up, legacyface.Config{Store: open()})
	b = startBridge(t, up, legacyface.Config{Store: open(), KeepAlive: 5 * time.Millisecond})
	return a, b
}

// resumeSetup starts an upstream, two replicas on the stores open makes,
// and a client initialized on the first.
func resumeSetup(t *testing.T, open func() sessionmap.Store) (context.Context, *upEnv, *bridgeEnv, *bridgeEnv, *rawClient) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	brA, brB := twoReplicas(t, up, open)
	c := newRawClient(t, brA.url)
	c.initialize(ctx, nil)
	return ctx, up, brA, brB, c
}

func sharedStores(t *testing.T) map[string]func() sessionmap.Store {
	mem := sessionmap.NewMemory()
	srv := redistest.Start(t)
	prefix := srv.Prefix(t)
	return map[string]func() sessionmap.Store{
		"memory": func() sessionmap.Store { return mem },
		"redis": func() sessionmap.Store {
			st, err := sessionmap.OpenRedis(context.Background(), sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix},
				sessionmap.WithLogger(quietLogger()))
			if err != nil {
				t.Fatalf("OpenRedis: %v", err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
	}
}

// A tasks/result stream cut right after its priming event resumes with GET
// and Last-Event-ID on a second replica sharing the store, which waits on the
// task and sends the answer under the original request id.
func TestResumeTasksResultOnAnotherReplica(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx, up, brA, brB, c := resumeSetup(t, open)
			id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "late"}, "task": map[string]any{}}))

			s := openSSE(t, ctx, c, brA.url, rpcBody(77, "tasks/result", map[string]any{"taskId": id}), "")
			primeID := s.prime()
			s.cut()

			r := openSSE(t, ctx, c, brB.url, nil, primeID)
			if r.status != http.StatusOK || r.sc == nil {
				t.Fatalf("resume: HTTP %d %s", r.status, r.body)
			}
			up.srv.CompleteNow(upstreamTaskID(t, brA.b.Store(), id))
			ev := r.answer("77", "late")
			stream, _, _ := strings.Cut(primeID, ".")
			if !strings.HasPrefix(ev.id, stream+".") || ev.id == primeID {
				t.Errorf("answer event id %q is not a later id of stream %q", ev.id, stream)
			}
		})
	}
}

// Replay gives the events of the named stream after the given id, and never
// another stream's, even of the same session.
func TestResumeReplaysOnlyThatStream(t *testing.T) {
	ctx, up, brA, brB, c := resumeSetup(t, sharedStores(t)["memory"])
	var ids, primes, answerIDs []string
	var streams []*sseStream
	for i, text := range []string{"first", "second"} {
		id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": text}, "task": map[string]any{}}))
		s := openSSE(t, ctx, c, brA.url, rpcBody(100+i, "tasks/result", map[string]any{"taskId": id}), "")
		ids, primes, streams = append(ids, id), append(primes, s.prime()), append(streams, s)
	}
	for i, s := range streams {
		up.srv.CompleteNow(upstreamTaskID(t, brA.b.Store(), ids[i]))
		ev, ok := s.next()
		if !ok {
			t.Fatalf("stream %d: no answer", i)
		}
		answerIDs = append(answerIDs, ev.id)
	}
	for i := range streams {
		r := openSSE(t, ctx, c, brB.url, nil, primes[i])
		var got []sseEvent
		for ev, ok := r.next(); ok; ev, ok = r.next() {
			got = append(got, ev)
		}
		if len(got) != 1 || got[0].id != answerIDs[i] {
			t.Fatalf("replay of stream %d: %d events %+v, want only its answer %s", i, len(got), got, answerIDs[i])
		}
		if rid, _, _, _ := got[0].msg(t); string(rid) != []string{"100", "101"}[i] {
			t.Errorf("replay of stream %d answers id %s", i, rid)
		}
	}
}

// An input request answered before the break is not presented again after
// the resume; the one left unanswered is, once, and both reach the upstream
// exactly once.
func TestResumeRepresentsOnlyUnansweredInput(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx, up, brA, brB, c := resumeSetup(t, open)
			_, s, asked := twoQuestions(t, ctx, c, brA.url)
			answer := func(url string, ev sseEvent) {
				t.Helper()
				rid, _, _, _ := ev.msg(t)
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid, "result": map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}})
				c.url = url
				if r, err := c.post(ctx, b, nil); err != nil || r.Status != http.StatusAccepted {
					t.Fatalf("answer: %v %+v", err, r)
				}
			}
			answer(brA.url, asked[0])
			up.rec.awaitServed(t, ctx, "tasks/update") // recorded, then sent upstream
			lastID := asked[1].id
			s.cut()

			r := openSSE(t, ctx, c, brB.url, nil, lastID)
			if r.status != http.StatusOK || r.sc == nil {
				t.Fatalf("resume: HTTP %d %s", r.status, r.body)
			}
			var again []sseEvent
			for {
				ev, ok := r.message()
				if !ok {
					t.Fatal("resumed stream ended without the answer")
				}
				rid, m, _, res := ev.msg(t)
				if m == "elicitation/create" {
					again = append(again, ev)
					answer(brB.url, ev)
					continue
				}
				if m == "" && string(rid) == "9" {
					if len(res) == 0 {
						t.Fatalf("answer %s", ev.data)
					}
					break
				}
			}
			_, _, p0, _ := asked[0].msg(t)
			_, _, p1, _ := asked[1].msg(t)
			if len(again) != 1 {
				t.Fatalf("questions after the resume: %d, want only the unanswered one", len(again))
			}
			idA, _, pa, _ := again[0].msg(t)
			if id1, _, _, _ := asked[1].msg(t); !bytes.Equal(idA, id1) {
				t.Errorf("re-presented under id %s, first presented under %s: the same question keeps its id", idA, id1)
			}
			if msgOf(pa) != msgOf(p1) || msgOf(pa) == msgOf(p0) {
				t.Errorf("re-presented %q; unanswered %q, answered %q", msgOf(pa), msgOf(p1), msgOf(p0))
			}
			if cn := up.srv.Counters(); cn.InputResponses != 2 || cn.DuplicateKeys != 0 {
				t.Errorf("upstream input responses %d, duplicates %d; want 2 and 0", cn.InputResponses, cn.DuplicateKeys)
			}
		})
	}
}

// twoQuestions starts an elicit_task asking two questions and opens its
// tasks/result (id 9) on url, read until both questions arrived.
func twoQuestions(t *testing.T, ctx context.Context, c *rawClient, url string) (string, *sseStream, []sseEvent) {
	t.Helper()
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Q?", "count": 2}, "task": map[string]any{}}))
	s := openSSE(t, ctx, c, url, rpcBody(9, "tasks/result", map[string]any{"taskId": id}), "")
	s.prime()
	var asked []sseEvent
	for len(asked) < 2 {
		ev, ok := s.next()
		if !ok {
			t.Fatal("stream ended before both questions")
		}
		if _, m, _, _ := ev.msg(t); m == "elicitation/create" {
			asked = append(asked, ev)
		}
	}
	return id, s, asked
}

func msgOf(params json.RawMessage) string {
	var p struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Message
}

// A Last-Event-ID of another session's stream answers exactly like an
// unknown one: 404 with the same body.
func TestResumeForeignSessionIsUnknown(t *testing.T) {
	ctx, _, brA, brB, c := resumeSetup(t, sharedStores(t)["memory"])
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	s := openSSE(t, ctx, c, brA.url, rpcBody(5, "tasks/result", map[string]any{"taskId": id}), "")
	primeID := s.prime()
	s.cut()

	other := newRawClient(t, brB.url)
	other.initialize(ctx, nil)
	foreign := openSSE(t, ctx, other, brB.url, nil, primeID)
	stream, _, _ := strings.Cut(primeID, ".")
	unknown := openSSE(t, ctx, other, brB.url, nil, "AAAAAAAAAAAAAAAAAAAAAA.0")
	if foreign.status != http.StatusNotFound || unknown.status != http.StatusNotFound || !bytes.Equal(foreign.body, unknown.body) {
		t.Errorf("foreign: %d %s; unknown: %d %s", foreign.status, foreign.body, unknown.status, unknown.body)
	}
	if len(stream) < 22 {
		t.Errorf("stream id %q is shorter than 128 random bits", stream)
	}
	// The owner still resumes it.
	if r := openSSE(t, ctx, c, brB.url, nil, primeID); r.status != http.StatusOK {
		t.Errorf("owner resume: HTTP %d %s", r.status, r.body)
	}
}

// A plain tools/call (no "task") whose upstream made a task resumes by
// waiting on that task: the tool is never sent upstream twice (M-13).
func TestResumePlainToolsCallNeverReissued(t *testing.T) {
	ctx, up, brA, brB, c := resumeSetup(t, sharedStores(t)["memory"])
	s := openSSE(t, ctx, c, brA.url, rpcBody(3, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "plain"}}), "")
	if s.sc == nil {
		t.Fatalf("tools/call answered without a stream: %d %s", s.status, s.body)
	}
	primeID := s.prime()
	s.cut()

	r := openSSE(t, ctx, c, brB.url, nil, primeID)
	if r.status != http.StatusOK || r.sc == nil {
		t.Fatalf("resume: HTTP %d %s", r.status, r.body)
	}
	adm := brA.b.Store().(sessionmap.Admin)
	tasks, err := adm.AllTasks(ctx, sessionmap.TaskFilter{})
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks %v %v", tasks, err)
	}
	up.srv.CompleteNow(tasks[0].UpstreamTaskID)
	r.answer("3", "plain")
	if n := len(up.rec.byMethod("tools/call")); n != 1 {
		t.Errorf("upstream tools/call %d times, want 1", n)
	}
}

// The standalone GET stream primes with an id too and its notifications
// (notifications/tasks/status) are kept: a client resuming it on another
// replica gets those after its Last-Event-ID, then the live stream.
func TestResumeListenStreamOnAnotherReplica(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	open := sharedStores(t)["memory"]
	brA := startBridge(t, up, legacyface.Config{Store: open(), StatusNotifications: true})
	brB := startBridge(t, up, legacyface.Config{Store: open(), StatusNotifications: true})
	c := newRawClient(t, brA.url)
	c.initialize(ctx, nil)
	g := openSSE(t, ctx, c, brA.url, nil, "")
	if g.sc == nil {
		t.Fatalf("GET: HTTP %d %s", g.status, g.body)
	}
	primeID := g.prime()
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	up.srv.CompleteNow(upstreamTaskID(t, brA.b.Store(), id))
	var seen []sseEvent
	for {
		ev, ok := g.next()
		if !ok {
			t.Fatal("GET stream ended")
		}
		seen = append(seen, ev)
		if bytes.Contains(ev.data, []byte(`"completed"`)) {
			break
		}
	}
	g.cut()

	r := openSSE(t, ctx, c, brB.url, nil, primeID)
	if r.status != http.StatusOK || r.sc == nil {
		t.Fatalf("resume: HTTP %d %s", r.status, r.body)
	}
	for i, want := range seen {
		ev, ok := r.next()
		if !ok || ev.id != want.id || !bytes.Equal(ev.data, want.data) {
			t.Fatalf("replayed event %d = %+v %v, want %+v", i, ev, ok, want)
		}
	}
}

// Graceful stop with resumable streams: a blocked tasks/result stream ends
// without an answer (no "call again" error), and the client resumes it on
// another replica, which answers when the task completes: a rolling restart
// drops no wait.
func TestShutdownLeavesStreamsToResume(t *testing.T) {
	ctx, up, brA, brB, c := resumeSetup(t, sharedStores(t)["memory"])
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "kept"}, "task": map[string]any{}}))
	s := openSSE(t, ctx, c, brA.url, rpcBody(21, "tasks/result", map[string]any{"taskId": id}), "")
	primeID := s.prime()
	if err := brA.b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if ev, ok := s.next(); ok {
		t.Fatalf("the draining replica answered %s; want the stream closed for the client to resume", ev.data)
	}
	r := openSSE(t, ctx, c, brB.url, nil, primeID)
	if r.status != http.StatusOK || r.sc == nil {
		t.Fatalf("resume: HTTP %d %s", r.status, r.body)
	}
	up.srv.CompleteNow(upstreamTaskID(t, brB.b.Store(), id))
	r.answer("21", "kept")
}

// A resumed tasks/result stream whose wait goes on sends its headers and an
// event with an id at once (the id the client resumed from, no data), not
// only keep-alive comments until the task ends: a client that loses this
// stream too can resume it again with Last-Event-ID. On the old code the
// first event came only with the answer, and the TypeScript SDK, which
// takes its resumption token from the stream it reads, reconnected a second
// time without one and got 409.
func TestResumedStreamStartsWithAnEventID(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx, up, brA, brB, c := resumeSetup(t, open)
			id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "late"}, "task": map[string]any{}}))
			s := openSSE(t, ctx, c, brA.url, rpcBody(78, "tasks/result", map[string]any{"taskId": id}), "")
			primeID := s.prime()
			s.cut()

			r := openSSE(t, ctx, c, brB.url, nil, primeID)
			if r.status != http.StatusOK || r.sc == nil {
				t.Fatalf("resume: HTTP %d %s", r.status, r.body)
			}
			// The task is still working: the first event must come now.
			if got := r.prime(); got != primeID {
				t.Fatalf("resumed stream's first event id %q, want %q", got, primeID)
			}
			r.cut()
			// Resumed again from that id, on the first replica: served.
			r2 := openSSE(t, ctx, c, brA.url, nil, primeID)
			if r2.status != http.StatusOK || r2.sc == nil {
				t.Fatalf("second resume: HTTP %d %s", r2.status, r2.body)
			}
			r2.prime()
			up.srv.CompleteNow(upstreamTaskID(t, brA.b.Store(), id))
			r2.answer("78", "late")
		})
	}
}
