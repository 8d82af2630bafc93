package legacyface_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// peerHeader carries the address a test client pretends to connect from: the
// server below makes it the request's RemoteAddr (every test client is
// really on 127.0.0.1).
const peerHeader = "X-Test-Peer"

type peerTransport struct{ peer string }

func (p peerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(peerHeader, p.peer)
	return http.DefaultTransport.RoundTrip(r)
}

// peerURL serves br's face again behind a server that takes each request's
// peer address from peerHeader.
func peerURL(t *testing.T, br *bridgeEnv) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get(peerHeader); p != "" {
			r.RemoteAddr = p
		}
		br.b.Mux().ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

func clientFrom(t *testing.T, url, peer, authz string) *rawClient {
	c := newRawClient(t, url)
	c.hc = &http.Client{Transport: peerTransport{peer: peer}}
	c.authz = authz
	return c
}

// syncBuffer is a log sink for tests.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var initParams = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}}

// A flood of unauthenticated initialize requests from one address fills the
// session table, and then gets 503 itself (it displaces no one, not even its
// own sessions); an authenticated client and a client at another address
// still get a session each: the least recently used idle flood session makes
// room, answers 404 afterwards like an expired one, and the eviction is
// logged once in plain words. Before, the full table refused everyone.
func TestAnonymousFloodCannotLockOutOthers(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	up := startUpstream(t, demo.Options{})
	logs := &syncBuffer{}
	br := startBridge(t, up, legacyface.Config{MaxSessions: 20, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	url := peerURL(t, br)

	var flood []*rawClient
	for i := range 20 {
		c := clientFrom(t, url, "192.0.2.7:4000", "")
		c.initialize(ctx, nil)
		flood = append(flood, c)
		_ = i
	}
	r, err := clientFrom(t, url, "192.0.2.7:4001", "").try(ctx, "initialize", initParams)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusServiceUnavailable || r.Err == nil || r.Err.Code != rpc.CodeLimitReached || r.Header.Get("Retry-After") == "" {
		t.Fatalf("the flood's 21st session: HTTP %d %s, want 503 with Retry-After and the limit code", r.Status, r.Body)
	}

	authed := clientFrom(t, url, "192.0.2.7:4002", "Bearer alice")
	authed.initialize(ctx, nil)
	if r := authed.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "in"}}); r.Err != nil {
		t.Errorf("authenticated client with the table full of anonymous sessions: %s", r.Envelope)
	}
	other := clientFrom(t, url, "198.51.100.9:5000", "")
	other.initialize(ctx, nil)
	if r := other.call(ctx, "tools/list", nil); r.Err != nil {
		t.Errorf("client at another address: %s", r.Envelope)
	}
	if n := br.b.Sessions(); n != 20 {
		t.Errorf("sessions %d, want the bound, 20", n)
	}
	// The two least recently used flood sessions made room.
	for i, c := range flood[:2] {
		if r, err := c.try(ctx, "tools/list", nil); err != nil || r.Status != http.StatusNotFound {
			t.Errorf("evicted flood session %d: %v HTTP %d, want 404", i, err, r.Status)
		}
	}
	if r := flood[2].call(ctx, "tools/list", nil); r.Err != nil {
		t.Errorf("a flood session that was not evicted: %s", r.Envelope)
	}
	if got := strings.Count(logs.String(), "ended the least recently used idle session without credentials"); got != 1 {
		t.Errorf("eviction log lines %d, want 1 (rate-limited):\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), "refused a new legacy session: the session limit is reached") {
		t.Errorf("no refusal logged:\n%s", logs.String())
	}
}

// --max-sessions-per-principal: one address without credentials, or one
// principal, holds at most its share; the next session gets 429 with
// Retry-After and the limit code while others are still served, and a
// closed session gives its place back.
func TestSessionSharePerPrincipal(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{MaxSessions: 100, MaxSessionsPerPrincipal: 3})
	url := peerURL(t, br)
	for _, tc := range []struct{ peer, authz, who string }{
		{"192.0.2.7:1", "", "client address"},
		{"[2001:db8::1]:1", "", "client address"},
		{"192.0.2.8:1", "Bearer alice", "credentials"},
	} {
		var held []*rawClient
		for range 3 {
			c := clientFrom(t, url, tc.peer, tc.authz)
			c.initialize(ctx, nil)
			held = append(held, c)
		}
		next := tc.peer
		if strings.HasPrefix(next, "[2001") {
			next = "[2001:db8::2]:9" // the same /64
		}
		r, err := clientFrom(t, url, next, tc.authz).try(ctx, "initialize", initParams)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != http.StatusTooManyRequests || r.Err == nil || r.Err.Code != rpc.CodeLimitReached ||
			r.Header.Get("Retry-After") == "" || !strings.Contains(r.Err.Message, tc.who) ||
			!strings.Contains(string(r.Err.Data), `"limit":"max-sessions-per-principal","scope":"principal","max":3`) {
			t.Errorf("%s %q: 4th session: HTTP %d %s, want 429 naming --max-sessions-per-principal", tc.peer, tc.authz, r.Status, r.Body)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
		req.Header.Set("Mcp-Session-Id", held[0].sessionID())
		if tc.authz != "" {
			req.Header.Set("Authorization", tc.authz)
		}
		resp, err := (&http.Client{Transport: peerTransport{peer: tc.peer}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		clientFrom(t, url, tc.peer, tc.authz).initialize(ctx, nil) // the place was given back
	}
	// Another address (and so the pool) is unaffected.
	clientFrom(t, url, "198.51.100.9:1", "").initialize(ctx, nil)
}
