package legacyface_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// sessionCounts counts the session lifecycle events the metrics see.
type sessionCounts struct{ start, rehydrate, end atomic.Int64 }

func (c *sessionCounts) hook(ev legacyface.SessionEvent) {
	switch ev.Kind {
	case "start":
		c.start.Add(1)
	case "rehydrate":
		c.rehydrate.Add(1)
	case "end":
		c.end.Add(1)
	}
}

// Beyond MaxIdleCached, the least recently used idle sessions go dormant
// (a few dozen bytes each) and come back whole from the store on their next
// request, with everything they had: the session bound still counts them,
// the metrics never see them end, and a foreign principal cannot reach
// them.
func TestIdleSessionsBeyondTheCacheGoDormant(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	var ev sessionCounts
	cfg := legacyface.Config{MaxIdleCached: 2, Store: sessionmap.NewMemory()}
	cfg.Hooks.Session = ev.hook
	br := startBridge(t, up, cfg)
	const n = 6
	cs := make([]*rawClient, n)
	for i := range cs {
		cs[i] = newRawClient(t, br.url)
		cs[i].authz = "Bearer alice"
		cs[i].initialize(ctx, nil)
	}
	if got, dormant := br.b.Sessions(), br.b.DormantSessions(); got != n || dormant != n-2 {
		t.Fatalf("sessions %d (dormant %d), want %d (%d dormant)", got, dormant, n, n-2)
	}
	// Every session still serves, the dormant ones loaded back in place.
	id := taskIDOf(t, cs[0].call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "kept"}, "task": map[string]any{}}))
	for i, c := range cs {
		if r := c.call(ctx, "tasks/list", nil); r.Err != nil || !strings.Contains(string(r.Result), id) {
			t.Errorf("session %d after going dormant: %s", i, r.Envelope)
		}
	}
	if s := statusOf(t, cs[0].call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
		t.Errorf("tasks/get on a session that was dormant: %s", s)
	}
	if got, dormant := br.b.Sessions(), br.b.DormantSessions(); got != n || dormant < n-3 {
		t.Errorf("sessions after use %d (dormant %d), want %d with at most 3 whole", got, dormant, n)
	}
	if ev.start.Load() != n || ev.rehydrate.Load() != 0 || ev.end.Load() != 0 {
		t.Errorf("lifecycle events start/rehydrate/end %d/%d/%d, want %d/0/0: going dormant is not an end",
			ev.start.Load(), ev.rehydrate.Load(), ev.end.Load(), n)
	}

	// A dormant session of another principal answers like an unknown one.
	br.b.DemoteAll()
	thief := newRawClient(t, br.url)
	thief.authz = "Bearer mallory"
	thief.setSession(cs[1].sessionID())
	stolen, err := thief.try(ctx, "tasks/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	thief.setSession(strings.Repeat("A", len(cs[1].sessionID())))
	unknown, err := thief.try(ctx, "tasks/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if stolen.Status != http.StatusNotFound || stolen.Status != unknown.Status || string(stolen.Body) != string(unknown.Body) {
		t.Errorf("a dormant session of another principal: HTTP %d %q; an unknown id: HTTP %d %q", stolen.Status, stolen.Body, unknown.Status, unknown.Body)
	}
	if r := cs[1].call(ctx, "tasks/list", nil); r.Err != nil {
		t.Errorf("the owner after a foreign request: %s", r.Envelope)
	}

	// DELETE of a dormant session ends it (once) and removes its record.
	br.b.DemoteAll()
	del, err := cs[2].deleteSession(ctx)
	if err != nil || del != http.StatusNoContent {
		t.Fatalf("DELETE of a dormant session: HTTP %d %v", del, err)
	}
	if _, err := cfg.Store.GetSession(ctx, sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer alice"), Session: cs[2].sessionID()}); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Errorf("record of the deleted dormant session: %v", err)
	}
	if r, _ := cs[2].try(ctx, "tasks/list", nil); r == nil || r.Status != http.StatusNotFound {
		t.Errorf("deleted dormant session: %+v, want 404", r)
	}
	if got := br.b.Sessions(); got != n-1 || ev.end.Load() != 1 {
		t.Errorf("after DELETE: %d sessions, %d ended; want %d and 1", got, ev.end.Load(), n-1)
	}
}

// The session bound counts dormant sessions: going dormant frees memory, not
// places.
func TestMaxSessionsCountsDormantSessions(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{MaxSessions: 3, MaxIdleCached: 1})
	for range 3 {
		newRawClient(t, br.url).initialize(ctx, nil)
	}
	if br.b.DormantSessions() != 2 {
		t.Fatalf("dormant %d, want 2", br.b.DormantSessions())
	}
	c := newRawClient(t, br.url)
	r, err := c.try(ctx, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusServiceUnavailable || r.Err == nil || !strings.Contains(r.Err.Message, "maximum of 3 sessions") {
		t.Errorf("session 4 with 2 of 3 dormant: HTTP %d %s, want 503 and the bound", r.Status, r.Body)
	}
}

// A dormant session expires like a whole one: 404 after the idle timeout,
// its record deleted and its end reported, whether a request or the sweep
// finds it first.
func TestDormantSessionsExpire(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var ev sessionCounts
	st := sessionmap.NewMemory()
	cfg := legacyface.Config{SessionIdleTimeout: 2 * time.Second, Clock: clock, Store: st, MaxIdleCached: 1}
	cfg.Hooks.Session = ev.hook
	br := startBridge(t, up, cfg)
	asked := newRawClient(t, br.url)
	asked.initialize(ctx, nil)
	swept := newRawClient(t, br.url)
	swept.initialize(ctx, nil)
	newRawClient(t, br.url).initialize(ctx, nil) // keeps the cache's one place
	if br.b.DormantSessions() != 2 {
		t.Fatalf("dormant %d, want 2", br.b.DormantSessions())
	}
	advance(5 * time.Second)
	r, err := asked.try(ctx, "tasks/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusNotFound {
		t.Errorf("dormant session idle 5 s with a 2 s timeout: HTTP %d %s, want 404", r.Status, r.Body)
	}
	legacyface.Sweep(br.b)
	if got := br.b.Sessions(); got != 0 {
		t.Errorf("sessions after expiry and the sweep: %d, want 0", got)
	}
	for _, c := range []*rawClient{asked, swept} {
		if _, err := st.GetSession(ctx, sessionmap.Scope{Session: c.sessionID()}); !errors.Is(err, sessionmap.ErrNotFound) {
			t.Errorf("expired dormant session record: %v, want deleted", err)
		}
	}
	if ev.end.Load() != 3 {
		t.Errorf("sessions ended %d, want 3", ev.end.Load())
	}
}

// deleteSession ends c's session with HTTP DELETE and returns the status.
func (c *rawClient) deleteSession(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return 0, err
	}
	c.headers(req.Header)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Sessions going dormant and coming back while their clients keep sending
// requests: every request is served, none is lost to a race between the
// LRU, the dormant table and a load from the store, and the table still
// counts each session once.
func TestDormantSessionsUnderConcurrentUse(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	up := startUpstream(t, demo.Options{})
	var ev sessionCounts
	cfg := legacyface.Config{MaxIdleCached: 1, Store: sessionmap.NewMemory()}
	cfg.Hooks.Session = ev.hook
	br := startBridge(t, up, cfg)
	const n, rounds = 6, 15
	cs := make([]*rawClient, n)
	for i := range cs {
		cs[i] = newRawClient(t, br.url)
		cs[i].initialize(ctx, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan string, n*rounds)
	for _, c := range cs {
		wg.Go(func() {
			for range rounds {
				if r, err := c.try(ctx, "tasks/list", nil); err != nil || r.Status != http.StatusOK || r.Err != nil {
					errs <- fmt.Sprintf("%v %+v", err, r)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error("request on a session going dormant and back:", e)
	}
	if got := br.b.Sessions(); got != n {
		t.Errorf("sessions %d, want %d", got, n)
	}
	if ev.start.Load() != n || ev.rehydrate.Load() != 0 || ev.end.Load() != 0 {
		t.Errorf("lifecycle events start/rehydrate/end %d/%d/%d, want %d/0/0", ev.start.Load(), ev.rehydrate.Load(), ev.end.Load(), n)
	}
}
