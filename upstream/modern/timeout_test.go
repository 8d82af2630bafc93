package modernup

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// A stalled upstream does not hold a call for ever: after Timeout of
// silence the call fails with a retryable -32603 that names the upstream
// and its slowness (not "cancelled", not a hang), while the caller's own
// context is still live. Before Client.Timeout, the call waited as long as
// the caller did.
func TestCallTimeoutNamesTheStalledUpstream(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		readAll(r)           // (net/http notices the client's close only once the body is read)
		<-r.Context().Done() // stalled: never answers
	}))
	defer hs.Close()
	c := NewHTTP(hs.URL, nil)
	c.Timeout = 200 * time.Millisecond
	ctx := ctxT(t)
	_, err := c.CallTool(ctx, tool("x", nil), CallOptions{})
	if ctx.Err() != nil {
		t.Fatalf("the caller's context ended first: %v", err)
	}
	var ue *Error
	if !errors.As(err, &ue) || !ue.Temporary() || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("tools/call on a stalled upstream: %v; want a retryable ErrUnavailable", err)
	}
	if e := rpc.As(err); e.Code != rpc.CodeInternalError || !strings.Contains(e.Message, hs.URL) ||
		!strings.Contains(e.Message, "did not answer tools/call within 200ms") || !strings.Contains(e.Message, "try again") {
		t.Errorf("message %q; want it to name the upstream, the method, the bound and what to do", e.Message)
	}
	if _, err := c.GetTask(ctx, "T", CallOptions{}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("tasks/get on a stalled upstream: %v", err)
	}
	if got := (&Client{}).timeout(); got != DefaultTimeout {
		t.Errorf("default timeout %s, want %s", got, DefaultTimeout)
	}
	if got := (&Client{Timeout: -1}).timeout(); got != 0 {
		t.Errorf("negative timeout gives %s, want none", got)
	}
}

// The bound is on silence: a synchronous tool that keeps reporting
// progress runs longer than Timeout and still gets its answer.
func TestCallTimeoutRestartsOnProgress(t *testing.T) {
	const beats = 20
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := decodeReq(readAll(r))
		var p struct {
			Meta struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(req.Params, &p)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range beats {
			b, _ := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/progress",
				Params: json.RawMessage(fmt.Sprintf(`{"progressToken":%s,"progress":%d}`, p.Meta.Token, i))})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
			time.Sleep(40 * time.Millisecond) // the simulated tool's work between two reports
		}
		b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"resultType":"complete","content":[]}`)})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}))
	defer hs.Close()
	c := NewHTTP(hs.URL, nil)
	c.Timeout = 400 * time.Millisecond // half the tool's run, ten gaps between reports
	n := 0
	_, err := c.Call(ctxT(t), "tools/call", json.RawMessage(`{"name":"x","_meta":{"progressToken":7}}`), CallOptions{
		OnNotify: func(string, json.RawMessage) { n++ },
	})
	if err != nil {
		t.Fatalf("a tool reporting progress was cut: %v", err)
	}
	if n != beats {
		t.Errorf("%d progress notifications relayed, want %d", n, beats)
	}
}
