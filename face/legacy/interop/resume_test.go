package interop_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/interop/peers"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

type cutKey struct{}

// cutProxy sends everything to replica A until it cut the first
// tasks/result stream right after its priming event (as a crash or a
// load-balancer failover would), and everything to replica B from then on.
type cutProxy struct {
	a, b    *httputil.ReverseProxy
	cut     atomic.Bool
	resumes atomic.Int32 // GETs with Last-Event-ID
}

// cutReader passes the stream on until it carried an event id, then fails.
type cutReader struct {
	r    io.ReadCloser
	seen bool
	cut  func()
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.seen {
		c.cut()
		return 0, errors.New("cut by the test proxy")
	}
	n, err := c.r.Read(p)
	// The priming event, or the first comment of a stream without ids.
	if bytes.Contains(p[:n], []byte("id: ")) || bytes.Contains(p[:n], []byte(": stream open")) {
		c.seen = true
	}
	return n, err
}

func (c *cutReader) Close() error { return c.r.Close() }

func newCutProxy(t *testing.T, a, b string) *cutProxy {
	p := &cutProxy{}
	mk := func(target string) *httputil.ReverseProxy {
		u, err := url.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.ErrorLog = log.New(io.Discard, "", 0)
		rp.ModifyResponse = func(resp *http.Response) error {
			if resp.Request.Context().Value(cutKey{}) != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				resp.Body = &cutReader{r: resp.Body, cut: func() { p.cut.Store(true) }}
			}
			return nil
		}
		return rp
	}
	p.a, p.b = mk(a), mk(b)
	return p
}

func (p *cutProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
		p.resumes.Add(1)
	}
	if p.cut.Load() {
		p.b.ServeHTTP(w, r)
		return
	}
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tasks/result"`)) {
			r = r.WithContext(context.WithValue(r.Context(), cutKey{}, true))
		}
	}
	p.a.ServeHTTP(w, r)
}

// The official TypeScript SDK client resumes a tasks/result stream the
// server side dropped right after its priming event: it reconnects with GET
// and Last-Event-ID, here to another replica sharing the store, which
// presents the pending elicitation (never answered) and then the result.
func TestTSClientResumesBrokenTasksResult(t *testing.T) {
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
		b, err := legacyface.New(legacyface.Config{Upstream: upHS.URL + "/mcp", Store: st, Logger: slog.New(slog.DiscardHandler)})
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
	p := newCutProxy(t, urls[0], urls[1])
	phs := httptest.NewServer(p)
	t.Cleanup(phs.Close)

	start := time.Now()
	rep := peers.RunTSClient(t, phs.URL+"/mcp", peers.ClientOptions{
		Steps:   []string{"init", "elicit"},
		Args:    append(tsArgs(), "--side-on", "tasks/result,GET"),
		Timeout: clientTimeout,
	})
	rep.Require(t)
	if !p.cut.Load() || p.resumes.Load() == 0 {
		t.Fatalf("cut %v, resumes %d: the stream was not broken and resumed", p.cut.Load(), p.resumes.Load())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the client took %v; a resumed stream should answer well before its 60 s timeout", d)
	}
	if n := up.count("tasks/update"); n != 1 {
		t.Errorf("upstream tasks/update %d, want the elicitation answer exactly once", n)
	}
	if n := up.count("tools/call"); n != 1 {
		t.Errorf("upstream tools/call %d, want 1", n)
	}
}
