package modernup

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/modern"
)

// With Stamped the caller's params go upstream byte for byte (no second
// stamp); only a progress token is still rewritten per call, and restored
// for the caller (M-01 held by the caller's stamp).
func TestStampedParamsSentAsIs(t *testing.T) {
	env := startDemo(t, demo.Options{})
	meta := env.client.requestMeta(&CallOptions{})
	params, err := modern.StampRequestMeta(tool("echo", map[string]any{"text": "x"}), meta)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.CallTool(ctxT(t), params, CallOptions{Stamped: true, OnNotify: func(string, json.RawMessage) {}}); err != nil {
		t.Fatal(err)
	}
	sent, _ := decodeReq(env.rec.byMethod(modern.MethodToolsCall)[0].Body)
	if !bytes.Equal(sent.Params, params) {
		t.Fatalf("params sent %s, want them unchanged %s", sent.Params, params)
	}

	meta.ProgressToken = json.RawMessage(`"mine"`)
	withToken, err := modern.StampRequestMeta(tool("echo", map[string]any{"text": "y"}), meta)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.CallTool(ctxT(t), withToken, CallOptions{Stamped: true, OnNotify: func(string, json.RawMessage) {}}); err != nil {
		t.Fatal(err)
	}
	sent, _ = decodeReq(env.rec.byMethod(modern.MethodToolsCall)[1].Body)
	got, err := modern.DecodeRequestMeta(sent.Params)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.ProgressToken) == `"mine"` || !strings.HasPrefix(string(got.ProgressToken), `"tb-progress-`) {
		t.Fatalf("progress token sent %s, want the per-call rewrite", got.ProgressToken)
	}
}

// closeWatch records, when a response body is closed, whether its request's
// context had already ended.
type closeWatch struct {
	next     http.RoundTripper
	ctxEnded chan bool
}

type watchedBody struct {
	io.ReadCloser
	req *http.Request
	out chan bool
}

func (b *watchedBody) Close() error {
	select {
	case b.out <- b.req.Context().Err() != nil:
	default:
	}
	return b.ReadCloser.Close()
}

func (w closeWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(r)
	if err == nil {
		resp.Body = &watchedBody{ReadCloser: resp.Body, req: r, out: w.ctxEnded}
	}
	return resp, err
}

// A call that ends without its answer (here: the upstream cancelled it with
// notifications/cancelled) ends its POST's context before the stream is
// closed, so a RoundTripper on the way (the bridge's upstream meter) sees a
// request given up by the bridge, not a stream the upstream broke.
func TestUnansweredCallCancelsBeforeClose(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := decodeReq(readAll(r))
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		id, _ := json.Marshal(req.ID.Raw())
		_, _ = io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+string(id)+"}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer hs.Close()
	ended := make(chan bool, 1)
	c := NewHTTP(hs.URL, &http.Client{Transport: closeWatch{next: http.DefaultTransport, ctxEnded: ended}})
	defer c.Close()
	if _, err := c.Call(ctxT(t), modern.MethodDiscover, nil, CallOptions{}); err == nil {
		t.Fatal("a cancelled call answered")
	}
	if !<-ended {
		t.Fatal("the stream was closed while its request context was still live")
	}
}
