package legacyface_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/identity"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/runtime/upcred"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// tokenGate is an upstream's token check in front of the demo server: it
// knows which bearer tokens are valid for which subject (a test issuer),
// answers 401 with a challenge to any other, and hands the demo a
// per-subject credential, so the demo binds tasks to the subject (as an
// upstream that validates JWTs binds them to iss and sub) and a refreshed
// token still sees the subject's tasks. It records the Authorization of
// every tasks/get.
type tokenGate struct {
	next http.Handler
	mu   sync.Mutex
	subj map[string]string // valid "Bearer …" value → subject
	gets []string          // the Authorization of each tasks/get, as received
	all  [][2]string       // method and Authorization of every request
}

func (g *tokenGate) seen(method string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, r := range g.all {
		if r[0] == method {
			out = append(out, r[1])
		}
	}
	return out
}

func (g *tokenGate) allow(authz, subject string) {
	g.mu.Lock()
	g.subj[authz] = subject
	g.mu.Unlock()
}

func (g *tokenGate) revoke(authz string) {
	g.mu.Lock()
	delete(g.subj, authz)
	g.mu.Unlock()
}

func (g *tokenGate) seenGets() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.gets...)
}

func (g *tokenGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := r.Header.Get("Authorization")
	g.mu.Lock()
	sub, ok := g.subj[a]
	if r.Header.Get("Mcp-Method") == "tasks/get" {
		g.gets = append(g.gets, a)
	}
	g.all = append(g.all, [2]string{r.Header.Get("Mcp-Method"), a})
	g.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="the access token expired"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	r.Header.Set("Authorization", "Subject "+sub)
	g.next.ServeHTTP(w, r)
}

// authErrRT turns the upstream's 401 and 403 into the typed refusal
// (*oauthmeta.UpstreamAuthError) that upstream/modern reports for them.
type authErrRT struct{ next http.RoundTripper }

func (t authErrRT) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if ae := oauthmeta.FromResponse(resp, r.Header.Get("Mcp-Method")); ae != nil {
		resp.Body.Close()
		return nil, ae
	}
	return resp, nil
}

type credEnv struct {
	up   *upEnv
	gate *tokenGate
	br   *legacyface.Bridge
	url  string
	st   sessionmap.Store
}

// subjects maps the test's bearer tokens to subjects: the principal
// resolver is stable across one subject's tokens (as jwt mode is).
var subjects = map[string]string{"Bearer alice-A": "alice", "Bearer alice-B": "alice", "Bearer bob-1": "bob"}

func startCredBridge(t *testing.T, keeper *upcred.Keeper, st sessionmap.Store, mods ...func(*legacyface.Config)) *credEnv {
	t.Helper()
	up := startUpstream(t, demo.Options{})
	gate := &tokenGate{next: up.rec, subj: map[string]string{}}
	for tok, sub := range subjects {
		gate.allow(tok, sub)
	}
	ghs := httptest.NewServer(gate)
	t.Cleanup(ghs.Close)
	if st == nil {
		st = sessionmap.NewMemory()
	}
	client := modernup.NewHTTP(ghs.URL+"/mcp", &http.Client{Transport: authErrRT{next: http.DefaultTransport}})
	wc := fastWatch()
	wc.DisablePush = true // the watchers poll: every upstream read shows its credential
	cfg := legacyface.Config{UpstreamClient: client, Store: st, Logger: quietLogger(), Watch: wc, Credentials: keeper}
	for _, m := range mods {
		m(&cfg)
	}
	b, err := legacyface.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := b.Mux()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sub, ok := subjects[r.Header.Get("Authorization")]; ok {
			r = r.WithContext(upcred.WithPrincipal(r.Context(), identity.Principal{
				ID: sessionmap.PrincipalFromMTLSSubject("test-issuer\x00" + sub), Credential: r.Header.Get("Authorization")}))
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Shutdown(ctx)
		hs.Close()
		_ = b.Close()
	})
	return &credEnv{up: up, gate: gate, br: b, url: hs.URL + "/mcp", st: st}
}

func resultText(t *testing.T, r *reply) string {
	t.Helper()
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if r.Err != nil || json.Unmarshal(r.Result, &res) != nil || len(res.Content) == 0 {
		t.Fatalf("not a tool result: HTTP %d %s %s", r.Status, r.Envelope, r.Body)
	}
	return res.Content[0].Text
}

// A legacy client's token expires while its task runs: the wait is told
// "authorization expired" (not "task not found", and the task is not
// failed), the watcher stops polling, and when the client comes back with
// a fresh token the task completes and tasks/result delivers it.
func TestTokenExpiresMidTask(t *testing.T) {
	for _, parked := range []bool{true, false} {
		name := map[bool]string{true: "parked", false: "blocking"}[parked]
		t.Run(name, func(t *testing.T) { testTokenExpiresMidTask(t, parked) })
	}
}

func testTokenExpiresMidTask(t *testing.T, parked bool) {
	ctx := ctxT(t, 30*time.Second)
	env := startCredBridge(t, nil, nil, func(c *legacyface.Config) { c.DisableParkedWaits = !parked })
	c := newRawClient(t, env.url)
	c.authz = "Bearer alice-A"
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "done late"}, "task": map[string]any{}}))

	env.gate.revoke("Bearer alice-A") // A expires
	// A wait whose own token the upstream refused gets the upstream's 401
	// while its response has not started (the client's OAuth layer
	// refreshes), -32030 once it has; never a failed task.
	r := c.call(ctx, "tasks/result", map[string]any{"taskId": id})
	if r.Err == nil || (r.Status != http.StatusUnauthorized && (r.Err.Code != legacyface.CodeAuthorizationExpired || r.Err.Message != "authorization expired: call again with a fresh token")) {
		t.Fatalf("tasks/result with an expired token: HTTP %d %s", r.Status, r.Envelope)
	}
	// tasks/get carries the expired token itself: the upstream's 401 is
	// relayed (the client's OAuth layer refreshes), never a failed task.
	if r := c.call(ctx, "tasks/get", map[string]any{"taskId": id}); r.Err != nil {
		if r.Status != http.StatusUnauthorized && r.Err.Code != legacyface.CodeAuthorizationExpired {
			t.Fatalf("tasks/get with an expired token: HTTP %d %s", r.Status, r.Envelope)
		}
	} else if s := statusOf(t, r); s != "working" {
		t.Fatalf("the task is %s after its token expired, want working", s)
	}
	rec, err := env.st.(sessionmap.Admin).LookupTask(ctx, id)
	if err != nil || rec.Status != sessionmap.StatusWorking {
		t.Fatalf("record: %v %v, want working", rec.Status, err)
	}
	// Polling paused: no tasks/get goes upstream while nothing fresh exists.
	before := len(env.gate.seenGets())
	env.up.clock.Advance(61 * time.Second) // the task completes upstream meanwhile
	waitFor(t, ctx, func() bool { return env.br.Watching() == 0 || len(env.gate.seenGets()) == before }, "polling to pause")
	if n := len(env.gate.seenGets()); n > before+1 {
		t.Fatalf("%d tasks/get went upstream with no usable credential", n-before)
	}

	c.authz = "Bearer alice-B" // the client refreshed its token
	r = c.call(ctx, "tasks/result", map[string]any{"taskId": id})
	if r.Err != nil {
		t.Fatalf("tasks/result with a fresh token: %s", r.Envelope)
	}
	if got := resultText(t, r); got != "done late" {
		t.Fatalf("result %q", got)
	}
	gets := env.gate.seenGets()
	if last := gets[len(gets)-1]; last != "Bearer alice-B" {
		t.Fatalf("the last tasks/get carried %q, want the fresh token", last)
	}
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, cond func() bool, what string) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Token refresh: alice creates 5 tasks with token A and switches to token
// B; her session goes on (the principal resolver is stable across tokens),
// tasks/list shows the 5, tasks/result answers each, and from the switch on
// the watchers poll the upstream with B only. Bob sees none of them, with
// errors byte-identical to those for unknown ids.
func TestTokenRefreshKeepsTasks(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	env := startCredBridge(t, nil, nil)
	c := newRawClient(t, env.url)
	c.authz = "Bearer alice-A"
	c.initialize(ctx, nil)
	var ids []string
	for i := range 5 {
		ids = append(ids, taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task",
			"arguments": map[string]any{"ms": 30000 + 1000*i, "text": "r" + string(rune('0'+i))}, "task": map[string]any{}})))
	}
	// The watchers run with A for a while.
	for _, id := range ids {
		if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
			t.Fatalf("task %s", s)
		}
	}
	c.authz = "Bearer alice-B"
	r := c.call(ctx, "tasks/list", nil)
	var list struct {
		Tasks []struct {
			TaskID string `json:"taskId"`
		} `json:"tasks"`
	}
	if r.Err != nil || json.Unmarshal(r.Result, &list) != nil || len(list.Tasks) != 5 {
		t.Fatalf("tasks/list with token B: %s", r.Envelope)
	}
	switched := len(env.gate.seenGets())
	env.up.clock.Advance(40 * time.Second)
	for i, id := range ids {
		r := c.call(ctx, "tasks/result", map[string]any{"taskId": id})
		if got := resultText(t, r); got != "r"+string(rune('0'+i)) {
			t.Fatalf("task %d: result %q", i, got)
		}
	}
	after := env.gate.seenGets()[switched:]
	if len(after) == 0 {
		t.Fatal("no tasks/get after the switch")
	}
	for _, a := range after {
		if a != "Bearer alice-B" {
			t.Fatalf("a watcher polled with %q after the client switched to token B", a)
		}
	}

	bob := newRawClient(t, env.url)
	bob.authz = "Bearer bob-1"
	bob.initialize(ctx, nil)
	if r := bob.call(ctx, "tasks/list", nil); r.Err != nil || json.Unmarshal(r.Result, &list) != nil || len(list.Tasks) != 0 {
		t.Fatalf("bob's tasks/list: %s", r.Envelope)
	}
	unknown := sessionmap.NewTaskID()
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		theirs := bob.call(ctx, m, map[string]any{"taskId": ids[0]})
		none := bob.call(ctx, m, map[string]any{"taskId": unknown})
		a := strings.ReplaceAll(string(theirs.Envelope), ids[0], "ID")
		b := strings.ReplaceAll(string(none.Envelope), unknown, "ID")
		a = strings.Replace(a, `"id":`+idOf(theirs), `"id":N`, 1)
		b = strings.Replace(b, `"id":`+idOf(none), `"id":N`, 1)
		if theirs.Err == nil || a != b {
			t.Fatalf("%s: bob on alice's task answers %s; on an unknown id %s", m, theirs.Envelope, none.Envelope)
		}
	}
}

func idOf(r *reply) string {
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(r.Envelope, &env)
	return string(env.ID)
}

// A plain tools/call waiting on an upstream task (the client never sees
// the task) gets "authorization expired" when the token expires during the
// wait, parked or not.
func TestTokenExpiresDuringPlainCall(t *testing.T) {
	for _, parked := range []bool{true, false} {
		name := map[bool]string{true: "parked", false: "blocking"}[parked]
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t, 30*time.Second)
			env := startCredBridge(t, nil, nil, func(c *legacyface.Config) { c.DisableParkedWaits = !parked })
			c := newRawClient(t, env.url)
			c.authz = "Bearer alice-A"
			c.initialize(ctx, nil)
			type res struct {
				r   *reply
				err error
			}
			done := make(chan res, 1)
			go func() {
				r, err := c.try(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}})
				done <- res{r, err}
			}()
			waitFor(t, ctx, func() bool { return len(env.gate.seenGets()) > 0 }, "the wait's first poll")
			if parked {
				waitFor(t, ctx, func() bool { return env.br.ParkedWaits() == 1 }, "the wait to park")
			}
			env.gate.revoke("Bearer alice-A")
			select {
			case got := <-done:
				if got.err != nil {
					t.Fatal(got.err)
				}
				if got.r.Err == nil || got.r.Err.Code != legacyface.CodeAuthorizationExpired {
					t.Fatalf("the waiting tools/call got HTTP %d %s", got.r.Status, got.r.Envelope)
				}
			case <-ctx.Done():
				t.Fatal("the waiting tools/call was never told its authorization expired")
			}
		})
	}
}

// An owed upstream cancel whose credential expired is retried with the
// principal's next token, which reached the bridge with an unrelated
// request: the outbox uses the freshest credential at each attempt.
func TestOwedCancelUsesFreshToken(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	env := startCredBridge(t, nil, nil, func(c *legacyface.Config) {
		c.Outbox.Initial, c.Outbox.Max = 10*time.Millisecond, 50*time.Millisecond
	})
	c := newRawClient(t, env.url)
	c.authz = "Bearer alice-A"
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	env.gate.revoke("Bearer alice-A")
	if s := statusOf(t, c.call(ctx, "tasks/cancel", map[string]any{"taskId": id})); s != "cancelled" {
		t.Fatalf("tasks/cancel: %s", s)
	}
	if got := env.gate.seen("tasks/cancel"); len(got) != 1 || got[0] != "Bearer alice-A" {
		t.Fatalf("cancels sent: %q, want one with A (refused)", got)
	}
	c.authz = "Bearer alice-B"
	if r := c.call(ctx, "tools/list", nil); r.Err != nil {
		t.Fatalf("tools/list: %s", r.Envelope)
	}
	waitFor(t, ctx, func() bool {
		got := env.gate.seen("tasks/cancel")
		return len(got) > 1 && got[len(got)-1] == "Bearer alice-B"
	}, "the owed cancel to go out with token B")
	waitFor(t, ctx, func() bool {
		rec, err := env.st.(sessionmap.Admin).LookupTask(ctx, id)
		return err == nil && !rec.UpstreamCancelPending
	}, "the upstream to take the cancel")
	if got := env.gate.seen("tasks/cancel"); len(got) != 2 {
		t.Fatalf("cancels sent: %q; want A (refused), then B, and no attempts in between without a usable token", got)
	}
}
