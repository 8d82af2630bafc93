package edge_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/edge"
)

// A policy swapped by Reconfigure (bridge serve's SIGHUP) is enforced on the
// next request, without a new Edge.
func TestReconfigureSwapsPolicy(t *testing.T) {
	e := newEdge(t, edge.Config{})
	get := func(origin, peer string) (*httptest.ResponseRecorder, *edge.Request) {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
		r.Header.Set("Origin", origin)
		r.RemoteAddr = peer
		w := httptest.NewRecorder()
		er := new(edge.Request)
		e.Begin(w, r, er)
		return w, er
	}
	if w, _ := get("https://app.example.com", "192.0.2.10:1"); w.Code != http.StatusForbidden {
		t.Fatalf("before: foreign Origin got %d, want 403", w.Code)
	}
	proxies, _ := edge.ParseTrustedProxies([]string{"192.0.2.0/24"})
	e.Reconfigure(edge.Live{Policy: edge.Policy{AllowedOrigins: []string{"https://app.example.com"}}, TrustedProxies: proxies, MaxBodyBytes: 10})
	w, er := get("https://app.example.com", "192.0.2.10:1")
	if w.Code != http.StatusOK || !er.Trusted {
		t.Fatalf("after: listed Origin from a now trusted proxy got %d trusted %v, want admitted and trusted", w.Code, er.Trusted)
	}
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	w = httptest.NewRecorder()
	if e.Begin(w, r, new(edge.Request)) || w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("after: a body over the new bound got %d, want 413", w.Code)
	}
	if got := e.Current().Policy.AllowedOrigins; len(got) != 1 {
		t.Fatalf("Current: %v", got)
	}
	e.Reconfigure(edge.Live{})
	if w, _ := get("https://app.example.com", "192.0.2.10:1"); w.Code != http.StatusForbidden {
		t.Fatalf("reverted: foreign Origin got %d, want 403", w.Code)
	}
}

// Requests and swaps at once: each request sees one whole policy (-race).
func TestReconfigureConcurrent(t *testing.T) {
	e := newEdge(t, edge.Config{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			e.Reconfigure(edge.Live{Policy: edge.Policy{AllowedOrigins: []string{"https://a.example"}}})
			e.Reconfigure(edge.Live{})
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
			r.Header.Set("Origin", "https://a.example")
			w := httptest.NewRecorder()
			e.Begin(w, r, new(edge.Request))
			if w.Code != http.StatusOK && w.Code != http.StatusForbidden {
				t.Errorf("got %d", w.Code)
			}
		}
	}()
	wg.Wait()
}
