package interop_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/interop/peers"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// twiceCutProxy is cutProxy whose first resumed stream (GET with
// Last-Event-ID) breaks before the client read a byte of it, as when the
// replica it reached is killed at once: the proxy answers it itself with
// an empty event stream. The client can then only reconnect without
// Last-Event-ID.
type twiceCutProxy struct {
	*cutProxy
	resumeCut atomic.Bool
	bare      atomic.Int32 // GETs without Last-Event-ID after the resumed stream broke
}

func (p *twiceCutProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && p.cut.Load() {
		if r.Header.Get("Last-Event-ID") != "" && !p.resumeCut.Swap(true) {
			p.resumes.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush() // the client has its stream …
			panic(http.ErrAbortHandler)           // … which breaks before any event
		}
		if r.Header.Get("Last-Event-ID") == "" && p.resumeCut.Load() {
			p.bare.Add(1)
		}
	}
	p.cutProxy.ServeHTTP(w, r)
}

// The official TypeScript SDK client loses its tasks/result stream (cut
// after its priming event), resumes it with Last-Event-ID on another
// replica, and loses that resumed stream too before its first event, so
// it reconnects with a GET without Last-Event-ID (SDK 1.32.2 keeps only the
// ids of the stream it reads). The first replica saw its client leave the
// stream unanswered, so that GET resumes the owed stream on the second
// replica: the result arrives under the original request id, the
// elicitation answered once — the step passes instead of running into its
// timeout.
func TestTSClientGetsTheOwedAnswerAfterAReconnectWithoutLastEventID(t *testing.T) {
	t.Parallel()
	srv := demo.New(demo.Options{PollInterval: pollInterval})
	up := &upstreamLog{next: srv.Handler(), n: map[string]int{}}
	upMux := http.NewServeMux()
	upMux.Handle("/mcp", up)
	upHS := httptest.NewServer(upMux)
	t.Cleanup(func() {
		srv.Close()
		upHS.Close()
	})
	st := sessionmap.NewMemory()
	var urls []string
	for range 2 {
		// A short keep-alive: a wait that took its connection over notices
		// the client's close at the next one.
		b, err := legacyface.New(legacyface.Config{Upstream: upHS.URL + "/mcp", Store: st, KeepAlive: 50 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("face.New: %v", err)
		}
		hs := httptest.NewServer(b.Handler())
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = b.Shutdown(ctx)
			hs.Close()
			_ = b.Close()
		})
		urls = append(urls, hs.URL)
	}
	p := &twiceCutProxy{cutProxy: newCutProxy(t, urls[0], urls[1])}
	phs := httptest.NewServer(p)
	t.Cleanup(phs.Close)

	start := time.Now()
	rep := peers.RunTSClient(t, phs.URL+"/mcp", peers.ClientOptions{
		Steps:   []string{"init", "elicit"},
		Args:    append(tsArgs(), "--side-on", "tasks/result,GET"),
		Timeout: clientTimeout,
	})
	rep.Require(t)
	if !p.cut.Load() || !p.resumeCut.Load() || p.bare.Load() == 0 {
		t.Fatalf("cut %v, resumed stream cut %v, GETs without Last-Event-ID after it %d: the path was not taken",
			p.cut.Load(), p.resumeCut.Load(), p.bare.Load())
	}
	if d := time.Since(start); d > 25*time.Second {
		t.Errorf("the client took %v; the owed answer should arrive well before its timeout", d)
	}
	if n := up.count("tasks/update"); n != 1 {
		t.Errorf("upstream tasks/update %d, want the elicitation answer exactly once", n)
	}
	if n := up.count("tools/call"); n != 1 {
		t.Errorf("upstream tools/call %d, want 1", n)
	}
}
