package rrproxy

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func backend(t *testing.T, i int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Backend", strconv.Itoa(i))
		io.WriteString(w, r.URL.Path+" "+string(b))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func proxyOver(t *testing.T, srvs ...*httptest.Server) (*Proxy, string) {
	t.Helper()
	var us []*url.URL
	for _, s := range srvs {
		u, _ := url.Parse(s.URL)
		us = append(us, u)
	}
	p, err := New(us)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return p, front.URL
}

func post(t *testing.T, u, body string) (backend, text string) {
	t.Helper()
	resp, err := http.Post(u+"/mcp", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return resp.Header.Get("X-Backend"), string(b)
}

// TestRoundRobin: consecutive requests rotate over the backends with no
// affinity, and path and body arrive unchanged.
func TestRoundRobin(t *testing.T) {
	p, u := proxyOver(t, backend(t, 0), backend(t, 1), backend(t, 2))
	var got []string
	for i := range 6 {
		b, text := post(t, u, "req"+strconv.Itoa(i))
		if want := "/mcp req" + strconv.Itoa(i); text != want {
			t.Errorf("backend saw %q, want %q", text, want)
		}
		got = append(got, b)
	}
	if s := strings.Join(got, ","); s != "0,1,2,0,1,2" {
		t.Errorf("backends in order %s, want 0,1,2,0,1,2", s)
	}
	if counts, retries := p.Counts(); retries != 0 || counts[0] != 2 || counts[1] != 2 || counts[2] != 2 {
		t.Errorf("counts %v retries %d", counts, retries)
	}
}

// TestRefusedBackendIsSkipped: a dead backend (connection refused) costs a
// retry on the next one, with the same body, never an error to the client.
func TestRefusedBackendIsSkipped(t *testing.T) {
	dead := backend(t, 1)
	p, u := proxyOver(t, backend(t, 0), dead, backend(t, 2))
	dead.Close()
	for i := range 6 {
		b, text := post(t, u, "body"+strconv.Itoa(i))
		if b == "1" || text != "/mcp body"+strconv.Itoa(i) {
			t.Fatalf("request %d: backend %s answered %q", i, b, text)
		}
	}
	if _, retries := p.Counts(); retries != 3 {
		t.Errorf("retries %d, want 3 (requests 1, 3 and 5 land on the dead backend first)", retries)
	}
}

// TestStreamsAreNotBuffered: an SSE event reaches the client while the
// backend's response is still open (FlushInterval -1).
func TestStreamsAreNotBuffered(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: first\n\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "data: second\n\n")
	}))
	t.Cleanup(srv.Close)
	_, u := proxyOver(t, srv)
	resp, err := http.Get(u + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	defer close(release)
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	for sc.Scan() && len(lines) < 2 {
		lines = append(lines, sc.Text())
	}
	if strings.Join(lines, "|") != "id: 1|data: first" {
		t.Fatalf("first event before the backend finished: %q (%v)", lines, sc.Err())
	}
}

// TestReachedBackendIsNotRetried: a request that reached a backend which then
// died (the connection closed without an answer) is answered 502 and never
// sent to another backend: it may have had its effect (a created task).
func TestReachedBackendIsNotRetried(t *testing.T) {
	var mu sync.Mutex
	seen := 0
	dying := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen++
		mu.Unlock()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // dies after reading the request
		}
	}))
	t.Cleanup(dying.Close)
	healthy := backend(t, 1)
	p, u := proxyOver(t, dying, healthy)
	resp, err := http.Post(u+"/mcp", "application/json", strings.NewReader(`{"method":"tools/call"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
	counts, retries := p.Counts()
	mu.Lock()
	defer mu.Unlock()
	if seen != 1 || counts[1] != 0 || retries != 0 {
		t.Errorf("dying backend saw %d requests, healthy one %d, retries %d; want 1, 0, 0", seen, counts[1], retries)
	}
}
