package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/modern"
)

// guard bounds every wait so a broken server fails the test instead of
// hanging it; it is never used to let time pass.
const guard = 10 * time.Second

// sseStream reads one listen response incrementally.
type sseStream struct {
	t      *testing.T
	resp   *http.Response
	cancel context.CancelFunc
	msgs   chan []byte
}

func openListen(t *testing.T, url string, ids []string, c rawCall) *sseStream {
	t.Helper()
	c.Method = "subscriptions/listen"
	c.Params = map[string]any{"notifications": map[string]any{"taskIds": ids}}
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := http.DefaultClient.Do(c.request(t, ctx, url))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &sseStream{t: t, resp: resp, cancel: cancel, msgs: make(chan []byte, 64)}
	t.Cleanup(s.close)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("listen: HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	go func() {
		defer close(s.msgs)
		sc := bufio.NewScanner(resp.Body)
		var data []byte
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && data != nil:
				s.msgs <- data
				data = nil
			case strings.HasPrefix(line, "data: "):
				data = append(data, line[len("data: "):]...)
			}
		}
	}()
	return s
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next returns the next message, failing if none arrives within guard.
func (s *sseStream) next() []byte {
	s.t.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			s.t.Fatal("listen stream ended")
		}
		return m
	case <-time.After(guard):
		s.t.Fatal("no message on the listen stream")
	}
	return nil
}

type wireNote struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	raw    []byte
}

func subIDOf(t *testing.T, params json.RawMessage) any {
	t.Helper()
	p := decode[struct {
		Meta map[string]any `json:"_meta"`
	}](t, params)
	return p.Meta[mcp.MetaKeySubscriptionID]
}

func TestListenPushesTaskChanges_M47_M63(t *testing.T) {
	v := schemacheck.Load(t)
	s, clk, url := startServer(t, Options{})
	id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 50, "text": "pushed"}, rawCall{})
	other, _ := createTask(t, url, "slow_task", map[string]any{"ms": 50, "text": "other"}, rawCall{})
	foreign, _ := createTask(t, url, "slow_task", map[string]any{"ms": 50, "text": "x"}, rawCall{Auth: "Bearer someone-else"})

	st := openListen(t, url, []string{id, "no-such-task", foreign, id}, rawCall{ID: "listen-7"})
	// 1. The acknowledgement comes first, with the agreed subset (M-47).
	ack := decode[wireNote](t, st.next())
	if ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %s, want the acknowledgement", ack.Method)
	}
	v.Check(t, schemacheck.Modern, "SubscriptionsAcknowledgedNotification", mustJSON(t, ack))
	ap, err := modern.DecodeAcknowledgedParams(ack.Params)
	if err != nil {
		t.Fatal(err)
	}
	if len(ap.Notifications.TaskIDs) != 1 || ap.Notifications.TaskIDs[0] != id {
		t.Errorf("acknowledged %v, want only [%s] (no unknown or foreign ids)", ap.Notifications.TaskIDs, id)
	}
	if sub := subIDOf(t, ack.Params); sub != "listen-7" {
		t.Errorf("subscriptionId %v, want the listen id", sub)
	}
	// 2. The current state.
	first := st.next()
	v.Check(t, schemacheck.Ext, "TaskStatusNotification", first)
	n := decode[wireNote](t, first)
	d := decode[detailed](t, n.Params)
	if n.Method != "notifications/tasks" || d.TaskID != id || d.Status != modern.StatusWorking || subIDOf(t, n.Params) != "listen-7" {
		t.Fatalf("initial notification %s", first)
	}
	if strings.Contains(string(n.Params), "resultType") {
		t.Errorf("a notification carries resultType: %s", n.Params)
	}
	// 3. Each change, with the full DetailedTask, only for acknowledged ids.
	clk.Advance(50 * time.Millisecond) // completes id, other and foreign
	done := st.next()
	v.Check(t, schemacheck.Ext, "TaskStatusNotification", done)
	d = decode[detailed](t, decode[wireNote](t, done).Params)
	if d.TaskID != id || d.Status != modern.StatusCompleted {
		t.Fatalf("change notification %s", done)
	}
	if text, _ := textOf(t, d.Result); text != "pushed" {
		t.Errorf("pushed result %s", d.Result)
	}
	_, getRaw := getTask(t, url, id)
	gotTask := decode[map[string]json.RawMessage](t, getRaw)
	pushed := decode[map[string]json.RawMessage](t, decode[wireNote](t, done).Params)
	for k, val := range gotTask {
		if k == "resultType" || k == "_meta" {
			continue
		}
		if string(pushed[k]) != string(val) {
			t.Errorf("notification %s = %s, tasks/get says %s (must be identical)", k, pushed[k], val)
		}
	}
	_ = other

	// 4. A graceful server shutdown ends the stream with the listen result.
	s.Close()
	end := decode[wireNote](t, st.next())
	if end.ID != "listen-7" || end.Result == nil {
		t.Fatalf("last message %+v, want the listen result", end)
	}
	v.Check(t, schemacheck.Modern, "SubscriptionsListenResultResponse", mustJSON(t, end))
	if c := s.Counters(); c.ListenStreams != 1 || c.TaskNotifies != 2 {
		t.Errorf("counters %+v", c)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	m := map[string]any{"jsonrpc": "2.0"}
	b, _ := json.Marshal(v)
	_ = json.Unmarshal(b, &m)
	for k, val := range m {
		if val == nil {
			delete(m, k)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestListenInputRequiredPushAndDisconnect(t *testing.T) {
	s, _, url := startServer(t, Options{})
	ended := make(chan struct{}, 4)
	f := func() { ended <- struct{}{} }
	s.listenEnded.Store(&f)
	id, _ := createTask(t, url, "elicit_task", map[string]any{"question": "Q"}, rawCall{Caps: elicitCaps})
	st := openListen(t, url, []string{id}, rawCall{})
	st.next() // ack
	d := decode[detailed](t, decode[wireNote](t, st.next()).Params)
	if d.Status != modern.StatusInputRequired || len(d.InputRequests) != 1 {
		t.Fatalf("initial state %s %v", d.Status, d.InputRequests)
	}
	for k := range d.InputRequests {
		taskCall(t, url, "tasks/update", id, map[string]any{"inputResponses": map[string]any{
			k: map[string]any{"action": "accept", "content": map[string]any{"answer": "A"}},
		}}, rawCall{}).result(t)
	}
	// working (answers received) may coalesce with completed; completed must come.
	for {
		d = decode[detailed](t, decode[wireNote](t, st.next()).Params)
		if d.Status == modern.StatusCompleted {
			break
		}
		if d.Status != modern.StatusWorking {
			t.Fatalf("unexpected status %s", d.Status)
		}
	}
	if s.LiveListens() != 1 {
		t.Errorf("LiveListens = %d", s.LiveListens())
	}
	// The client going away ends the listen on the server (M-43: disconnect is cancellation).
	st.close()
	select {
	case <-ended:
	case <-time.After(guard):
		t.Fatal("the server kept the listen after the client disconnected")
	}
	if s.LiveListens() != 0 {
		t.Errorf("LiveListens = %d after disconnect", s.LiveListens())
	}
}

func TestListenWithPushDisabledAcknowledgesNoTasks(t *testing.T) {
	s, _, url := startServer(t, Options{DisablePush: true})
	id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 50, "text": "x"}, rawCall{})
	r := rawCall{Method: "subscriptions/listen", Params: map[string]any{"notifications": map[string]any{"taskIds": []string{id}}}}.do(t, url)
	if len(r.Notes) == 0 || r.Notes[0].Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("no acknowledgement: HTTP %d %s", r.Status, r.Body)
	}
	ap, err := modern.DecodeAcknowledgedParams(r.Notes[0].Params)
	if err != nil {
		t.Fatal(err)
	}
	if ap.Notifications.RequestsTasks() {
		t.Errorf("push disabled but task ids acknowledged: %s", r.Notes[0].Params)
	}
	for _, n := range r.Notes {
		if n.Method == "notifications/tasks" {
			t.Errorf("push disabled but a task notification was sent")
		}
	}
	if r.Msg == nil || r.Msg.Error != nil {
		t.Errorf("the listen did not end with a result: %s", r.Body)
	}
	if s.Counters().ListenStreams != 0 {
		t.Errorf("a task listen was served with push disabled")
	}
}

// TestListenWithGoSDKConnection reads the listen through go-sdk's own
// Streamable HTTP client connection, as the bridge's upstream does.
func TestListenWithGoSDKConnection(t *testing.T) {
	_, clk, url := startServer(t, Options{})
	id, _ := createTask(t, url, "fail_task", map[string]any{"reason": "nope", "ms": 5}, rawCall{})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	conn, err := (&mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	lid, _ := jsonrpc.MakeID("L1")
	params, _ := json.Marshal(map[string]any{
		"notifications": map[string]any{"taskIds": []string{id}},
		"_meta":         modernMeta(true, nil),
	})
	if err := conn.Write(ctx, &jsonrpc.Request{ID: lid, Method: "subscriptions/listen", Params: params}); err != nil {
		t.Fatal(err)
	}
	read := func() *jsonrpc.Request {
		t.Helper()
		m, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			t.Fatalf("got %T, want a notification", m)
		}
		return req
	}
	if m := read(); m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %s", m.Method)
	}
	if m := read(); m.Method != "notifications/tasks" {
		t.Fatalf("second message %s", m.Method)
	}
	clk.Advance(5 * time.Millisecond)
	m := read()
	p, err := modern.DecodeTaskStatusNotificationParams(m.Params)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != modern.StatusFailed || p.Error == nil || p.Error.Message != "nope" || p.SubscriptionID.Raw() != "L1" {
		t.Errorf("pushed %s", m.Params)
	}
}
