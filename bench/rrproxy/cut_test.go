package rrproxy

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A stream in flight from a backend that is then cut (Cut, as the chaos
// tool does when it kills the backend) reaches its client as a broken
// connection, at once, not as a clean end of stream; the other backend's
// stream goes on; the flights are forgotten once their bodies close.
func TestCutEndsTheBackendsStreams(t *testing.T) {
	first := make(chan struct{}, 2)
	stream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: \n\n")
		w.(http.Flusher).Flush()
		first <- struct{}{}
		<-r.Context().Done() // a live stream: it only ends when cut
	}))
	t.Cleanup(stream.Close)
	p, u := proxyOver(t, stream, stream)

	open := func() (*http.Response, *bufio.Reader) {
		req, _ := http.NewRequest(http.MethodGet, u+"/mcp", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		br := bufio.NewReader(resp.Body)
		if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "id: 1") {
			t.Fatalf("first line %q %v", line, err)
		}
		<-first
		return resp, br
	}
	_, br0 := open() // backend 0
	resp1, _ := open()
	if n := p.Cut(0); n != 1 {
		t.Fatalf("Cut(0) ended %d requests, want 1", n)
	}
	_, err := io.ReadAll(br0)
	if err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("the cut stream ended cleanly (err %v): the client cannot tell it broke", err)
	}
	resp1.Body.Close()
	if n := p.Cut(0); n != 0 {
		t.Errorf("a second Cut(0) ended %d requests, want 0", n)
	}
}
