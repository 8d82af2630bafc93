package legacyup_test

import (
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/runtime/credseal"
	"github.com/tasksbridge/tasksbridge/runtime/upcred"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// gateRT is the upstream's token check, at the client's side of the
// wire: it records every request's Authorization and answers 401 for a
// revoked token.
type gateRT struct {
	next    http.RoundTripper
	mu      sync.Mutex
	seen    []string
	revoked map[string]bool
}

func (g *gateRT) RoundTrip(r *http.Request) (*http.Response, error) {
	a := r.Header.Get("Authorization")
	g.mu.Lock()
	g.seen = append(g.seen, a)
	bad := g.revoked[a]
	g.mu.Unlock()
	if bad {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return &http.Response{StatusCode: http.StatusUnauthorized, Status: "401 Unauthorized", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Www-Authenticate": {`Bearer error="invalid_token"`}}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	}
	return g.next.RoundTrip(r)
}

func (g *gateRT) last() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[len(g.seen)-1]
}

// A pooled session opened with token A sends each later request with the
// principal's freshest token; after a 401 the request goes once more with
// the next freshest one.
func TestPooledSessionUsesFreshestCredential(t *testing.T) {
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	url, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	gate := &gateRT{next: http.DefaultTransport, revoked: map[string]bool{}}
	key := make([]byte, credseal.KeySize)
	_, _ = rand.Read(key)
	seal, err := credseal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	store := sessionmap.NewMemory()
	keeper := upcred.New(upcred.Config{Upstream: url, Store: store, Sealer: seal, Logger: slog.New(slog.DiscardHandler)})
	other := upcred.New(upcred.Config{Upstream: url, Store: store, Sealer: seal, Logger: slog.New(slog.DiscardHandler)})
	p, err := legacyup.NewPool(legacyup.Config{Endpoint: url, HTTPClient: &http.Client{Transport: gate},
		ForwardAuthorization: true, Credentials: keeper})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	ctx := ctxT(t)
	s, err := p.Session(ctx, "alice", "Bearer A")
	if err != nil {
		t.Fatal(err)
	}
	task := createTask(t, ctx, s, "slow_task", map[string]any{"ms": 60000, "text": "hi"})
	if got := gate.last(); got != "Bearer A" {
		t.Fatalf("first request carried %q", got)
	}
	// A later request of alice brings token B: the same session sends B.
	if s2, err := p.Session(ctx, "alice", "Bearer B"); err != nil || s2 != s {
		t.Fatalf("Session with a refreshed token: %v (same session: %v)", err, s2 == s)
	}
	if _, err := s.GetTask(ctx, task.TaskID); err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	if got := gate.last(); got != "Bearer B" {
		t.Fatalf("tasks/get after the refresh carried %q, want Bearer B", got)
	}
	// B is revoked; alice's next token C reached another replica (its
	// keeper, on the same store). The request refused with B is sent once
	// more, with C from the store.
	gate.mu.Lock()
	gate.revoked["Bearer B"] = true
	gate.mu.Unlock()
	other.Observe(ctx, "alice", "Bearer C", time.Time{})
	n := len(gate.seen)
	if _, err := s.GetTask(ctx, task.TaskID); err != nil {
		t.Fatalf("tasks/get after B was revoked: %v", err)
	}
	gate.mu.Lock()
	sent := append([]string(nil), gate.seen[n:]...)
	gate.mu.Unlock()
	if len(sent) != 2 || sent[0] != "Bearer B" || sent[1] != "Bearer C" {
		t.Fatalf("requests after the revocation carried %q, want B (refused) then C", sent)
	}
}
