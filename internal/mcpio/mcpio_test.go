package mcpio

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/rpc"
)

func mustID(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A listen that replaced an older one under the same request id stays
// cancellable after the older one has returned (the older one's exit used to
// unregister the newer listen, so notifications/cancelled no longer reached
// it).
func TestListensReusedID(t *testing.T) {
	var l Listens
	newDone := make(chan struct{})
	l.Start(context.Background(), mustID(t, float64(1)), func(ctx context.Context) { <-ctx.Done() })
	l.mu.Lock()
	old := l.m["1"]
	l.mu.Unlock()
	l.Start(context.Background(), mustID(t, float64(1)), func(ctx context.Context) { <-ctx.Done(); close(newDone) })
	<-old.done // the reused id cancelled the older listen, which has returned
	if !l.Cancel(json.RawMessage(`{"requestId":1}`)) {
		t.Fatal("notifications/cancelled did not find the newer listen")
	}
	<-newDone
	if l.Cancel(json.RawMessage(`{"requestId":1}`)) {
		t.Fatal("a cancelled listen was found again")
	}
	l.Wait()
}

func TestListensCancelByID(t *testing.T) {
	var l Listens
	done := make(chan struct{})
	l.Start(context.Background(), mustID(t, "a"), func(ctx context.Context) { <-ctx.Done(); close(done) })
	for _, p := range []string{`{"requestId":"b"}`, `{"requestId":null}`, `{}`, `not json`, `{"requestId":"a"`} {
		if l.Cancel(json.RawMessage(p)) {
			t.Fatalf("Cancel(%s) found a listen", p)
		}
	}
	if !l.Cancel(json.RawMessage(`{"requestId":"a","reason":"bye"}`)) {
		t.Fatal(`Cancel("a") missed the listen`)
	}
	<-done
	l.Wait()
	// A listen that ends by itself is unregistered.
	l.Start(context.Background(), mustID(t, float64(7)), func(context.Context) {})
	l.Wait()
	if l.Cancel(json.RawMessage(`{"requestId":7}`)) {
		t.Fatal("a finished listen was still registered")
	}
}

func TestOpenSSEAndWriteRPCError(t *testing.T) {
	rec := httptest.NewRecorder()
	send, ping := OpenSSE(rec)
	if err := send(&jsonrpc.Response{ID: mustID(t, float64(3)), Result: json.RawMessage(`{"ok":"<&>"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := ping(); err != nil {
		t.Fatal(err)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" || rec.Code != http.StatusOK || !rec.Flushed {
		t.Fatalf("SSE answer: %d %q flushed=%v", rec.Code, ct, rec.Flushed)
	}
	body := rec.Body.String()
	if !strings.HasPrefix(body, "event: message\ndata: {") || !strings.Contains(body, `"id":3`) || !strings.HasSuffix(body, "\n\n: keep-alive\n\n") {
		t.Fatalf("SSE body %q", body)
	}

	rec = httptest.NewRecorder()
	WriteRPCError(rec, http.StatusBadRequest, mustID(t, "x"), rpc.Errorf(rpc.CodeInvalidParams, "bad <input>"))
	var got struct {
		ID    string     `json:"id"`
		Error *rpc.Error `json:"error"`
	}
	if rec.Code != http.StatusBadRequest || rec.Header().Get("Content-Type") != "application/json" ||
		json.Unmarshal(rec.Body.Bytes(), &got) != nil || got.ID != "x" || got.Error.Code != rpc.CodeInvalidParams ||
		!strings.Contains(rec.Body.String(), "bad <input>") {
		t.Fatalf("error answer: %d %s", rec.Code, rec.Body.String())
	}
}

func TestTaskListen(t *testing.T) {
	id := mustID(t, float64(1))
	listen := &jsonrpc.Request{ID: id, Method: "subscriptions/listen",
		Params: json.RawMessage(`{"notifications":{"taskIds":["t1"]}}`)}
	if p, ok := TaskListen(listen); !ok || len(p.Notifications.TaskIDs) != 1 {
		t.Fatalf("task listen not recognised: %+v %v", p, ok)
	}
	for _, r := range []*jsonrpc.Request{
		{ID: id, Method: "tools/call", Params: json.RawMessage(`{}`)},
		{Method: "subscriptions/listen", Params: json.RawMessage(`{"notifications":{"taskIds":["t1"]}}`)}, // a notification
		{ID: id, Method: "subscriptions/listen", Params: json.RawMessage(`{"notifications":{}}`)},
	} {
		if _, ok := TaskListen(r); ok {
			t.Errorf("TaskListen(%s %s) = true", r.Method, r.Params)
		}
	}
}

// The wrapped connection's context outlives Connect's and keeps its values.
func TestWrapTransport(t *testing.T) {
	type key struct{}
	a, _ := mcp.NewInMemoryTransports()
	var got context.Context
	var gotCancel context.CancelFunc
	tr := WrapTransport(a, func(ctx context.Context, cancel context.CancelFunc, c mcp.Connection) mcp.Connection {
		got, gotCancel = ctx, cancel
		return c
	})
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	c, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cancel()
	if got.Err() != nil || got.Value(key{}) != "v" {
		t.Fatalf("wrapped context: err %v, value %v", got.Err(), got.Value(key{}))
	}
	gotCancel()
	if got.Err() == nil {
		t.Fatal("cancel did not end the wrapped context")
	}
}
