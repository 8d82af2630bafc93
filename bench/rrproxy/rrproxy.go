// Package rrproxy is a small round-robin HTTP load balancer for tests and the
// chaos tool: every request goes to the next backend in turn, with no session
// affinity, so a client that keeps one Mcp-Session-Id reaches a different
// bridge replica on each request. That is the deployment the bridge's shared
// store is meant for (a load balancer without sticky sessions).
//
// Responses are flushed as they arrive (FlushInterval -1), so SSE streams
// pass through unbuffered. When a backend refuses the connection the request
// never reached it, so the proxy tries the next backend, as production load
// balancers do for connect errors (nginx's proxy_next_upstream error); a
// request that reached a backend that then died is answered 502 and never
// sent twice, since it may have had an effect.
package rrproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
)

// maxBody bounds a request body the proxy buffers for a retry.
const maxBody = 8 << 20

// Proxy is the round-robin handler. Create it with New.
type Proxy struct {
	backends []*url.URL
	next     atomic.Uint64
	rp       *httputil.ReverseProxy

	onRequest atomic.Pointer[func(backend int, r *http.Request)]

	mu      sync.Mutex
	counts  []int // attempts per backend
	retries int   // attempts after a refused connection
	// flights are the requests in flight per backend, until their response
	// body is closed (Cut ends them).
	flights []map[*flight]struct{}
}

// flight is one forwarded request; cancel ends it.
type flight struct{ cancel context.CancelFunc }

// New returns a proxy over backends (base URLs such as http://127.0.0.1:8080;
// the request's path is appended).
func New(backends []*url.URL) (*Proxy, error) {
	if len(backends) == 0 {
		return nil, errors.New("rrproxy: no backends")
	}
	p := &Proxy{backends: backends, counts: make([]int, len(backends)), flights: make([]map[*flight]struct{}, len(backends))}
	for i := range p.flights {
		p.flights[i] = map[*flight]struct{}{}
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:       func(*httputil.ProxyRequest) {}, // the transport picks the backend
		Transport:     &rotator{p: p, base: http.DefaultTransport},
		FlushInterval: -1,
		// A backend killed mid-stream is what the proxy is for; the client
		// sees the cut, the log would only repeat it.
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "rrproxy: backend failed: "+err.Error(), http.StatusBadGateway)
		},
	}
	return p, nil
}

// OnRequest sets a function called with the index of the backend each
// attempt of a request goes to (a refused attempt, then the next one), before
// it is sent; r.GetBody gives its body. It may be set while serving.
func (p *Proxy) OnRequest(f func(backend int, r *http.Request)) { p.onRequest.Store(&f) }

// Counts returns how many attempts went to each backend, and how many were
// retries after a refused connection.
func (p *Proxy) Counts() (perBackend []int, retries int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.counts...), p.retries
}

// Cut ends every request in flight to backend i, responses streaming back
// included, and reports how many it ended: their clients see the
// connection cut (the proxy aborts the response, never ends it cleanly),
// as a load balancer that notices a dead backend closes its streams.
// Callers use it when they kill the backend, so that the client sees the
// cut at once whatever the kernel does with the dead process's sockets.
func (p *Proxy) Cut(i int) int {
	p.mu.Lock()
	fs := p.flights[i]
	p.flights[i] = map[*flight]struct{}{}
	p.mu.Unlock()
	for f := range fs {
		f.cancel()
	}
	return len(fs)
}

// ServeHTTP forwards r to the next backend.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			http.Error(w, "rrproxy: reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if len(b) > maxBody {
			http.Error(w, fmt.Sprintf("rrproxy: request body larger than %d bytes", maxBody), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	p.rp.ServeHTTP(w, r)
}

// rotator sends each attempt to the next backend in turn.
type rotator struct {
	p    *Proxy
	base http.RoundTripper
}

func (t *rotator) RoundTrip(r *http.Request) (*http.Response, error) {
	var lastErr error
	for range len(t.p.backends) {
		i := int((t.p.next.Add(1) - 1) % uint64(len(t.p.backends)))
		b := t.p.backends[i]
		ctx, cancel := context.WithCancel(r.Context())
		f := &flight{cancel: cancel}
		out := r.Clone(ctx)
		out.URL.Scheme, out.URL.Host = b.Scheme, b.Host
		out.Host = b.Host
		if r.GetBody != nil {
			body, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			out.Body = body
		}
		t.p.mu.Lock()
		t.p.flights[i][f] = struct{}{}
		t.p.counts[i]++
		if lastErr != nil {
			t.p.retries++
		}
		t.p.mu.Unlock()
		if f := t.p.onRequest.Load(); f != nil {
			(*f)(i, out)
		}
		resp, err := t.base.RoundTrip(out)
		if err == nil {
			resp.Body = &flightBody{ReadCloser: resp.Body, done: func() { t.p.land(i, f) }}
			return resp, nil
		}
		t.p.land(i, f)
		if !refused(err) {
			return resp, err
		}
		lastErr = err
	}
	return nil, lastErr
}

// land forgets flight f to backend i and releases its context.
func (p *Proxy) land(i int, f *flight) {
	p.mu.Lock()
	delete(p.flights[i], f)
	p.mu.Unlock()
	f.cancel()
}

// flightBody calls done once when the response body is closed.
type flightBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *flightBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// refused reports a connect error: nothing was sent, so another backend may
// take the request.
func refused(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}
