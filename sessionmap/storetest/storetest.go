// Package storetest is the conformance suite for sessionmap.Store
// implementations: scoping, monotonic status, pinned cancel, answered keys,
// cursor pagination and expiry. A new backend passes it before the bridge
// may use it.
package storetest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Factory creates a fresh, empty backing store for one test and returns an
// opener. The suite may Close a store and call open again: the new store must
// see the same data (that is how durability is checked). clock is the store's
// injected clock (sessionmap.WithClock).
type Factory func(t *testing.T, clock func() time.Time) (open func() sessionmap.Store)

// Clock is a manual clock for tests.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts at the current wall time (millisecond precision, UTC), so
// stores that mirror expiry into a wall-clock TTL behave.
func NewClock() *Clock { return &Clock{now: time.Now().UTC().Truncate(time.Millisecond)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Run runs the whole suite against f.
func Run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"SessionLifecycle", testSessionLifecycle},
		{"TaskRoundTripAndReopen", testTaskRoundTrip},
		{"TaskValidation", testTaskValidation},
		{"ScopeIsolation_L68_L69_L53", testScopeIsolation},
		{"NoCredentialScopeIsSession", testNoCredentialScope},
		{"MonotonicStatus", testMonotonic},
		{"PinnedCancelWins_L58_L59_L55", testPinCancel},
		{"UpstreamCancelOwedDurably_L57", testUpstreamCancelOwed},
		{"AnsweredKeysIdempotent", testAnsweredKeys},
		{"AnsweredKeysConcurrent", testAnsweredConcurrent},
		{"InputAnswersOwedDurably_M28_M30", testAnswersOwed},
		{"PaginationNewestFirstStable_L49_L50_L54", testPagination},
		{"CursorTamper_L51", testCursorTamper},
		{"ListMatchesGet_L52", testListMatchesGet},
		{"ListFullIsGetTask_L52", testListFull},
		{"PrincipalKeyMigration", testPrincipalKeyMigration},
		{"Expiry_L64_L65", testExpiry},
		{"DeleteSessionTasks", testDeleteSessionTasks},
		{"UnknownIDs", testUnknownIDs},
		{"ConcurrentCreatesOneWins", testConcurrentCreates},
		{"UpstreamEraMemo_M08", testUpstreamEra},
		{"StreamIndexOwedAnswers", testStreamIndex},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := NewClock()
			open := f(t, clk.Now)
			e := &env{t: t, clock: clk, open: open, ctx: context.Background()}
			e.s = open()
			t.Cleanup(func() { _ = e.s.Close() })
			tc.fn(t, e)
		})
	}
}

type env struct {
	t     *testing.T
	clock *Clock
	open  func() sessionmap.Store
	s     sessionmap.Store
	ctx   context.Context
}

// reopen closes the store and opens it again over the same data.
func (e *env) reopen() {
	e.t.Helper()
	if err := e.s.Close(); err != nil {
		e.t.Fatalf("close: %v", err)
	}
	e.s = e.open()
}

func i64(v int64) *int64 { return &v }

// newTask returns a task with every field set, owned by sc.
func newTask(sc sessionmap.Scope, created time.Time) sessionmap.Task {
	return sessionmap.Task{
		ID:                sessionmap.NewTaskID(),
		Scope:             sc,
		Direction:         sessionmap.LegacyToModern,
		Origin:            sessionmap.OriginUpstreamTask,
		Upstream:          "https://upstream.example/mcp",
		UpstreamTaskID:    "up-" + sessionmap.NewTaskID(),
		UpstreamSessionID: "",
		Method:            "tools/call",
		ToolName:          "slow_tool",
		RequestedTTLMs:    i64(600000),
		TTLMs:             nil,
		Status:            sessionmap.StatusWorking,
		StatusMessage:     "queued",
		CreatedAt:         created,
		LastUpdatedAt:     created,
		PollIntervalMs:    i64(1000),
	}
}

func (e *env) create(sc sessionmap.Scope) sessionmap.Task {
	e.t.Helper()
	task := newTask(sc, e.clock.Now())
	if err := e.s.CreateTask(e.ctx, task); err != nil {
		e.t.Fatalf("CreateTask: %v", err)
	}
	return task
}

func (e *env) get(sc sessionmap.Scope, id string) sessionmap.Task {
	e.t.Helper()
	got, err := e.s.GetTask(e.ctx, sc, id)
	if err != nil {
		e.t.Fatalf("GetTask(%q): %v", id, err)
	}
	return got
}

// sameTask compares everything but WrittenAt, via JSON (times in UTC).
func sameTask(t *testing.T, want, got sessionmap.Task) {
	t.Helper()
	want.WrittenAt, got.WrittenAt = time.Time{}, time.Time{}
	want.CreatedAt, want.LastUpdatedAt = want.CreatedAt.UTC(), want.LastUpdatedAt.UTC()
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	if string(w) != string(g) {
		t.Fatalf("task mismatch\nwant %s\n got %s", w, g)
	}
}

// sameNotFound asserts err is exactly what an unknown id gives: the same
// value, type and text (docs/ARCHITECTURE.md, A foreign id answers like an
// unknown one: existence must not leak).
func sameNotFound(t *testing.T, what string, err error) {
	t.Helper()
	ref := sessionmap.ErrNotFound
	if err == nil {
		t.Fatalf("%s: no error, want not found", what)
	}
	if err != ref || reflect.TypeOf(err) != reflect.TypeOf(ref) || err.Error() != ref.Error() {
		t.Fatalf("%s: got %T %q, want exactly %T %q", what, err, err, ref, ref)
	}
}

func testSessionLifecycle(t *testing.T, e *env) {
	p := sessionmap.PrincipalFromAuthorization("Bearer alice-token")
	init := json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}`)
	s := sessionmap.Session{ID: "sess-1", Principal: p, Era: era.Legacy, ProtocolVersion: "2025-11-25",
		InitializeParams: init, LogLevel: "info", IdleTimeoutMs: 60_000}
	if err := e.s.CreateSession(e.ctx, s); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if err := e.s.CreateSession(e.ctx, s); !errors.Is(err, sessionmap.ErrExists) {
		t.Fatalf("duplicate CreateSession = %v, want ErrExists", err)
	}
	sc := sessionmap.Scope{Principal: p, Session: "sess-1"}
	got, err := e.s.GetSession(e.ctx, sc)
	if err != nil {
		t.Fatalf("GetSession: %v", err)
	}
	var wantInit, gotInit any
	_ = json.Unmarshal(init, &wantInit)
	_ = json.Unmarshal(got.InitializeParams, &gotInit)
	if got.ID != "sess-1" || got.Principal != p || got.Era != era.Legacy || got.ProtocolVersion != "2025-11-25" ||
		got.LogLevel != "info" || !reflect.DeepEqual(wantInit, gotInit) || !got.CreatedAt.Equal(e.clock.Now()) ||
		!got.ExpiresAt.Equal(e.clock.Now().Add(time.Minute)) {
		t.Fatalf("GetSession = %+v", got)
	}
	for _, foreign := range []sessionmap.Scope{
		{Principal: sessionmap.PrincipalFromAuthorization("Bearer mallory"), Session: "sess-1"},
		{Session: "sess-1"},
		{Principal: p, Session: "sess-2"},
	} {
		_, err := e.s.GetSession(e.ctx, foreign)
		sameNotFound(t, fmt.Sprintf("GetSession(%+v)", foreign), err)
		_, err = e.s.TouchSession(e.ctx, foreign, nil)
		sameNotFound(t, "TouchSession foreign", err)
		sameNotFound(t, "DeleteSession foreign", e.s.DeleteSession(e.ctx, foreign))
	}

	e.clock.Advance(30 * time.Second)
	lvl := "debug"
	touched, err := e.s.TouchSession(e.ctx, sc, &lvl)
	if err != nil {
		t.Fatalf("TouchSession: %v", err)
	}
	if !touched.LastSeenAt.Equal(e.clock.Now()) || touched.LogLevel != "debug" ||
		!touched.ExpiresAt.Equal(e.clock.Now().Add(time.Minute)) {
		t.Fatalf("TouchSession = %+v", touched)
	}
	e.reopen()
	if got, err := e.s.GetSession(e.ctx, sc); err != nil || got.LogLevel != "debug" || !got.LastSeenAt.Equal(e.clock.Now()) {
		t.Fatalf("after reopen GetSession = %+v, %v", got, err)
	}
	// Sliding idle expiry: 50 s after the touch it lives, 61 s after it is gone.
	e.clock.Advance(50 * time.Second)
	if _, err := e.s.GetSession(e.ctx, sc); err != nil {
		t.Fatalf("GetSession before idle expiry: %v", err)
	}
	e.clock.Advance(11 * time.Second)
	_, err = e.s.GetSession(e.ctx, sc)
	sameNotFound(t, "GetSession after idle expiry", err)
	// An expired id can be reused.
	if err := e.s.CreateSession(e.ctx, s); err != nil {
		t.Fatalf("CreateSession over an expired one: %v", err)
	}
	if err := e.s.DeleteSession(e.ctx, sc); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	_, err = e.s.GetSession(e.ctx, sc)
	sameNotFound(t, "GetSession after delete", err)

	if err := e.s.CreateSession(e.ctx, sessionmap.Session{ID: "x", Era: "medieval"}); !errors.Is(err, sessionmap.ErrInvalidArgument) {
		t.Fatalf("bad era = %v, want ErrInvalidArgument", err)
	}
	if err := e.s.CreateSession(e.ctx, sessionmap.Session{ID: "y", Era: era.Modern,
		InitializeParams: json.RawMessage(`{`)}); !errors.Is(err, sessionmap.ErrInvalidArgument) {
		t.Fatalf("bad params = %v, want ErrInvalidArgument", err)
	}
}

func testTaskRoundTrip(t *testing.T, e *env) {
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer a"), Session: "s1"}
	want := newTask(sc, e.clock.Now().Add(-time.Second))
	want.Direction = sessionmap.ModernToLegacy
	want.UpstreamSessionID = "legacy-upstream-session"
	want.TTLMs = i64(3_600_000)
	want.AnsweredKeys = []string{"b", "a", "a"}
	if err := e.s.CreateTask(e.ctx, want); err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	want.AnsweredKeys = []string{"a", "b"} // stored sorted and deduplicated
	got := e.get(sc, want.ID)
	sameTask(t, want, got)
	if got.WrittenAt.IsZero() {
		t.Fatal("WrittenAt not set")
	}
	// Durable: a fresh open sees it.
	e.reopen()
	sameTask(t, want, e.get(sc, want.ID))
	if err := e.s.CreateTask(e.ctx, want); !errors.Is(err, sessionmap.ErrExists) {
		t.Fatalf("duplicate CreateTask = %v, want ErrExists", err)
	}

	// Defaults: status working, CreatedAt now, LastUpdatedAt = CreatedAt;
	// a synthesized task may be created terminal with its result.
	min := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
		Origin: sessionmap.OriginSynthesized}
	if err := e.s.CreateTask(e.ctx, min); err != nil {
		t.Fatalf("CreateTask minimal: %v", err)
	}
	m := e.get(sc, min.ID)
	if m.Status != sessionmap.StatusWorking || !m.CreatedAt.Equal(e.clock.Now()) || !m.LastUpdatedAt.Equal(m.CreatedAt) || m.TTLMs != nil {
		t.Fatalf("defaults = %+v", m)
	}
	syn := newTask(sc, e.clock.Now())
	syn.Origin, syn.Status = sessionmap.OriginSynthesized, sessionmap.StatusCompleted
	syn.Result = json.RawMessage(`{"content":[{"type":"text","text":"done"}],"isError":false}`)
	if err := e.s.CreateTask(e.ctx, syn); err != nil {
		t.Fatalf("CreateTask synthesized: %v", err)
	}
	if g := e.get(sc, syn.ID); g.Status != sessionmap.StatusCompleted || string(g.Result) != string(syn.Result) {
		t.Fatalf("synthesized = %+v", g)
	}
	// The returned record does not alias the store.
	g := e.get(sc, want.ID)
	g.AnsweredKeys[0] = "mutated"
	*g.RequestedTTLMs = 1
	if again := e.get(sc, want.ID); again.AnsweredKeys[0] != "a" || *again.RequestedTTLMs != 600000 {
		t.Fatalf("store aliased a returned record: %+v", again)
	}
}

func testTaskValidation(t *testing.T, e *env) {
	sc := sessionmap.Scope{Session: "s"}
	base := func() sessionmap.Task { return newTask(sc, e.clock.Now()) }
	cases := map[string]func(*sessionmap.Task){
		"empty id":      func(x *sessionmap.Task) { x.ID = "" },
		"long id":       func(x *sessionmap.Task) { x.ID = string(make([]byte, sessionmap.MaxIDLen+1)) },
		"empty scope":   func(x *sessionmap.Task) { x.Scope = sessionmap.Scope{} },
		"bad direction": func(x *sessionmap.Task) { x.Direction = "sideways" },
		"bad origin":    func(x *sessionmap.Task) { x.Origin = "" },
		"bad status":    func(x *sessionmap.Task) { x.Status = "submitted" },
		"result and error": func(x *sessionmap.Task) {
			x.Status = sessionmap.StatusFailed
			x.Result, x.Error = json.RawMessage(`{}`), json.RawMessage(`{}`)
		},
		"bad json":       func(x *sessionmap.Task) { x.Status = sessionmap.StatusCompleted; x.Result = json.RawMessage(`{"a":`) },
		"pin not cancel": func(x *sessionmap.Task) { x.CancelPinned = true },
		"negative ttl":   func(x *sessionmap.Task) { x.TTLMs = i64(-1) },
	}
	for name, mut := range cases {
		x := base()
		mut(&x)
		if err := e.s.CreateTask(e.ctx, x); !errors.Is(err, sessionmap.ErrInvalidArgument) {
			t.Errorf("%s: CreateTask = %v, want ErrInvalidArgument", name, err)
		}
	}
	task := e.create(sc)
	if _, err := e.s.UpdateStatus(e.ctx, sc, task.ID, sessionmap.Snapshot{Status: "done"}); !errors.Is(err, sessionmap.ErrInvalidArgument) {
		t.Errorf("UpdateStatus bad status = %v, want ErrInvalidArgument", err)
	}
	if _, err := e.s.ListTasks(e.ctx, sessionmap.Scope{}, 10, ""); err == nil {
		t.Error("ListTasks with an empty scope succeeded")
	}
}

// world is two principals with two sessions each plus two credential-less
// sessions, each with tasks.
type world struct {
	scopes []sessionmap.Scope
	tasks  map[sessionmap.Scope][]sessionmap.Task
}

func buildWorld(e *env) world {
	pa := sessionmap.PrincipalFromAuthorization("Bearer token-a")
	pb := sessionmap.PrincipalFromMTLSSubject("CN=client-b,O=Example")
	w := world{scopes: []sessionmap.Scope{
		{Principal: pa, Session: "a1"}, {Principal: pa, Session: "a2"},
		{Principal: pb, Session: "b1"}, {Principal: pb, Session: "b2"},
		{Session: "n1"}, {Session: "n2"},
	}, tasks: map[sessionmap.Scope][]sessionmap.Task{}}
	for i, sc := range w.scopes {
		if err := e.s.CreateSession(e.ctx, sessionmap.Session{ID: sc.Session, Principal: sc.Principal, Era: era.Legacy}); err != nil {
			e.t.Fatalf("CreateSession: %v", err)
		}
		for j := 0; j < 3+i%2; j++ {
			e.clock.Advance(time.Millisecond)
			w.tasks[sc] = append(w.tasks[sc], e.create(sc))
		}
	}
	return w
}

// visibleTo lists the tasks scope sc may see, newest first.
func (w world) visibleTo(sc sessionmap.Scope) []string {
	var all []sessionmap.Task
	for _, owner := range w.scopes {
		if sc.Key() == owner.Key() {
			all = append(all, w.tasks[owner]...)
		}
	}
	slices.SortFunc(all, func(a, b sessionmap.Task) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return compareStr(a.ID, b.ID)
	})
	return ids(all)
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func ids(ts []sessionmap.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func (e *env) listAll(sc sessionmap.Scope, pageSize int) []string {
	e.t.Helper()
	var out []string
	cursor := ""
	for range 1000 {
		p, err := e.s.ListTasks(e.ctx, sc, pageSize, cursor)
		if err != nil {
			e.t.Fatalf("ListTasks(%+v): %v", sc, err)
		}
		out = append(out, ids(p.Tasks)...)
		if p.NextCursor == "" {
			return out
		}
		cursor = p.NextCursor
	}
	e.t.Fatal("ListTasks never ended")
	return nil
}

func testScopeIsolation(t *testing.T, e *env) {
	w := buildWorld(e)
	ctx := e.ctx
	for _, caller := range w.scopes {
		// Lists: exactly the caller's tasks (L-53), and everything GetTask
		// can return is listed (L-52).
		if got, want := e.listAll(caller, 2), w.visibleTo(caller); !slices.Equal(got, want) {
			t.Fatalf("ListTasks(%+v) = %v, want %v", caller, got, want)
		}
		for _, owner := range w.scopes {
			for _, task := range w.tasks[owner] {
				if caller.Key() == owner.Key() {
					if _, err := e.s.GetTask(ctx, caller, task.ID); err != nil {
						t.Fatalf("owner GetTask: %v", err)
					}
					continue
				}
				_, err := e.s.GetTask(ctx, caller, task.ID)
				sameNotFound(t, "foreign GetTask", err)
				_, err = e.s.UpdateStatus(ctx, caller, task.ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted, Result: json.RawMessage(`{}`)})
				sameNotFound(t, "foreign UpdateStatus", err)
				_, err = e.s.PinCancel(ctx, caller, task.ID)
				sameNotFound(t, "foreign PinCancel", err)
				_, err = e.s.RecordAnswered(ctx, caller, task.ID, []string{"k"})
				sameNotFound(t, "foreign RecordAnswered", err)
			}
		}
		_, err := e.s.GetTask(ctx, caller, sessionmap.NewTaskID())
		sameNotFound(t, "random GetTask", err)
	}
	// Nothing foreign changed anything.
	for _, owner := range w.scopes {
		for _, task := range w.tasks[owner] {
			got := e.get(owner, task.ID)
			if got.Status != sessionmap.StatusWorking || len(got.AnsweredKeys) != 0 {
				t.Fatalf("foreign write leaked into %+v", got)
			}
		}
	}
	// Cursors are bound to the owner scope: the same principal from another
	// session may use it, any other scope may not.
	a1, a2, b1, n1, n2 := w.scopes[0], w.scopes[1], w.scopes[2], w.scopes[4], w.scopes[5]
	pa, err := e.s.ListTasks(ctx, a1, 2, "")
	if err != nil || pa.NextCursor == "" {
		t.Fatalf("ListTasks a1 = %+v, %v", pa, err)
	}
	if _, err := e.s.ListTasks(ctx, a2, 2, pa.NextCursor); err != nil {
		t.Fatalf("same-principal cursor rejected: %v", err)
	}
	for _, other := range []sessionmap.Scope{b1, n1, {Session: a1.Session}} {
		if _, err := e.s.ListTasks(ctx, other, 2, pa.NextCursor); err != sessionmap.ErrInvalidCursor {
			t.Fatalf("foreign cursor for %+v = %v, want ErrInvalidCursor", other, err)
		}
	}
	pn, err := e.s.ListTasks(ctx, n1, 2, "")
	if err != nil || pn.NextCursor == "" {
		t.Fatalf("ListTasks n1 = %+v, %v", pn, err)
	}
	if _, err := e.s.ListTasks(ctx, n2, 2, pn.NextCursor); err != sessionmap.ErrInvalidCursor {
		t.Fatalf("n1 cursor in n2 = %v, want ErrInvalidCursor", err)
	}
	// Deleting "a1's tasks" with someone else's principal deletes nothing.
	if n, err := e.s.DeleteSessionTasks(ctx, sessionmap.Scope{Principal: b1.Principal, Session: a1.Session}); err != nil || n != 0 {
		t.Fatalf("foreign DeleteSessionTasks = %d, %v", n, err)
	}
	if got := e.listAll(a1, 100); len(got) != len(w.visibleTo(a1)) {
		t.Fatalf("a1 lost tasks to a foreign delete: %v", got)
	}
}

func testNoCredentialScope(t *testing.T, e *env) {
	p := sessionmap.PrincipalFromAuthorization("Bearer x")
	bound := e.create(sessionmap.Scope{Principal: p, Session: "s"})
	anon := e.create(sessionmap.Scope{Session: "s"})
	// A principal's task is visible from any of its sessions, not from the
	// credential-less scope of the same session id.
	e.get(sessionmap.Scope{Principal: p, Session: "other"}, bound.ID)
	_, err := e.s.GetTask(e.ctx, sessionmap.Scope{Session: "s"}, bound.ID)
	sameNotFound(t, "credential-less caller, principal task", err)
	// A credential-less task is visible only to its session.
	e.get(sessionmap.Scope{Session: "s"}, anon.ID)
	_, err = e.s.GetTask(e.ctx, sessionmap.Scope{Principal: p, Session: "s"}, anon.ID)
	sameNotFound(t, "principal caller, credential-less task", err)
	_, err = e.s.GetTask(e.ctx, sessionmap.Scope{Session: "s2"}, anon.ID)
	sameNotFound(t, "other session, credential-less task", err)

	// Principal derivation: stable, domain-separated, scheme case-insensitive,
	// never the raw secret.
	if p != sessionmap.PrincipalFromAuthorization("  bearer x ") || len(p) != 64 {
		t.Fatalf("PrincipalFromAuthorization not stable: %q", p)
	}
	if p == sessionmap.PrincipalFromAuthorization("Bearer X") || p == sessionmap.PrincipalFromMTLSSubject("Bearer x") {
		t.Fatal("different credentials share a principal")
	}
	if sessionmap.PrincipalFromAuthorization("") != "" || sessionmap.PrincipalFromMTLSSubject("") != "" {
		t.Fatal("no credential must give no principal")
	}
}

func testMonotonic(t *testing.T, e *env) {
	sc := sessionmap.Scope{Session: "s"}
	task := e.create(sc)
	step := func(snap sessionmap.Snapshot, want sessionmap.Status) sessionmap.Task {
		t.Helper()
		got, err := e.s.UpdateStatus(e.ctx, sc, task.ID, snap)
		if err != nil {
			t.Fatalf("UpdateStatus(%s): %v", snap.Status, err)
		}
		if got.Status != want {
			t.Fatalf("UpdateStatus(%s) status = %s, want %s", snap.Status, got.Status, want)
		}
		if stored := e.get(sc, task.ID); stored.Status != want {
			t.Fatalf("stored status = %s, want %s", stored.Status, want)
		}
		return got
	}
	e.clock.Advance(time.Second)
	got := step(sessionmap.Snapshot{Status: sessionmap.StatusInputRequired, StatusMessage: "need input", PollIntervalMs: i64(2500)}, sessionmap.StatusInputRequired)
	if got.StatusMessage != "need input" || *got.PollIntervalMs != 2500 || !got.LastUpdatedAt.Equal(e.clock.Now()) {
		t.Fatalf("snapshot not applied: %+v", got)
	}
	// A stale non-terminal observation is ignored.
	step(sessionmap.Snapshot{Status: sessionmap.StatusWorking, LastUpdatedAt: e.clock.Now().Add(-time.Minute)}, sessionmap.StatusInputRequired)
	e.clock.Advance(time.Second)
	step(sessionmap.Snapshot{Status: sessionmap.StatusWorking}, sessionmap.StatusWorking)
	e.clock.Advance(time.Second)
	result := json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"isError":false}`)
	done := step(sessionmap.Snapshot{Status: sessionmap.StatusCompleted, Result: result}, sessionmap.StatusCompleted)
	if string(done.Result) != string(result) {
		t.Fatalf("result not cached: %s", done.Result)
	}
	// Terminal is absorbing, even for newer observations, and even after a reopen.
	e.reopen()
	e.clock.Advance(time.Second)
	for _, st := range []sessionmap.Status{sessionmap.StatusWorking, sessionmap.StatusInputRequired, sessionmap.StatusFailed, sessionmap.StatusCancelled} {
		got := step(sessionmap.Snapshot{Status: st, Error: json.RawMessage(`{"code":-32603,"message":"late"}`)}, sessionmap.StatusCompleted)
		if string(got.Result) != string(result) || len(got.Error) != 0 || !got.LastUpdatedAt.Equal(done.LastUpdatedAt) {
			t.Fatalf("terminal record changed: %+v", got)
		}
	}
	// A failed task keeps its JSON-RPC error.
	f := e.create(sc)
	rpcErr := json.RawMessage(`{"code":-32603,"message":"boom","data":{"x":1}}`)
	got, err := e.s.UpdateStatus(e.ctx, sc, f.ID, sessionmap.Snapshot{Status: sessionmap.StatusFailed, Error: rpcErr})
	if err != nil || got.Status != sessionmap.StatusFailed || string(got.Error) != string(rpcErr) || got.Result != nil {
		t.Fatalf("failed = %+v, %v", got, err)
	}
}

// testUpstreamCancelOwed: a pinned cancel, and a terminal snapshot the bridge
// makes with CancelUpstream, record in the same write that the upstream is
// owed a tasks/cancel; the debt survives a reopen, PendingUpstream finds it
// across scopes, and SettleUpstream clears it (L-57).
func testUpstreamCancelOwed(t *testing.T, e *env) {
	a := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer a"), Session: "s1"}
	b := sessionmap.Scope{Session: "s2"}
	pinned, failed, plain := e.create(a), e.create(b), e.create(b)
	synth := newTask(b, e.clock.Now())
	synth.Origin, synth.UpstreamTaskID = sessionmap.OriginSynthesized, ""
	if err := e.s.CreateTask(e.ctx, synth); err != nil {
		t.Fatal(err)
	}
	if got, err := e.s.PinCancel(e.ctx, a, pinned.ID); err != nil || !got.UpstreamCancelPending {
		t.Fatalf("PinCancel = %+v, %v; want UpstreamCancelPending", got, err)
	}
	if got, err := e.s.PinCancel(e.ctx, b, synth.ID); err != nil || got.UpstreamCancelPending {
		t.Fatalf("PinCancel of a task without an upstream task = %+v, %v; want nothing owed", got, err)
	}
	e.clock.Advance(time.Millisecond)
	if got, err := e.s.UpdateStatus(e.ctx, b, failed.ID, sessionmap.Snapshot{Status: sessionmap.StatusFailed, Error: json.RawMessage(`{"code":-32600,"message":"x"}`), CancelUpstream: true}); err != nil || !got.UpstreamCancelPending {
		t.Fatalf("failing snapshot with CancelUpstream = %+v, %v", got, err)
	}
	if got, err := e.s.UpdateStatus(e.ctx, b, plain.ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted, Result: json.RawMessage(`{}`)}); err != nil || got.UpstreamCancelPending {
		t.Fatalf("upstream completion = %+v, %v; want nothing owed", got, err)
	}
	e.reopen()
	owed, err := e.s.PendingUpstream(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, o := range owed {
		ids[o.ID] = true
	}
	if len(owed) != 2 || !ids[pinned.ID] || !ids[failed.ID] {
		t.Fatalf("PendingUpstream = %v, want the pinned and the failed task", ids)
	}
	if got, err := e.s.SettleUpstream(e.ctx, a, pinned.ID); err != nil || got.UpstreamCancelPending || got.Status != sessionmap.StatusCancelled {
		t.Fatalf("SettleUpstream = %+v, %v", got, err)
	}
	if _, err := e.s.SettleUpstream(e.ctx, b, pinned.ID); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Fatalf("SettleUpstream from another scope: %v, want ErrNotFound", err)
	}
	e.reopen()
	if owed, err := e.s.PendingUpstream(e.ctx); err != nil || len(owed) != 1 || owed[0].ID != failed.ID {
		t.Fatalf("PendingUpstream after settle = %v, %v", owed, err)
	}
}

// testAnswersOwed: OweAnswers records the fresh keys as answered and keeps
// their payloads owed in the same durable write; a key is owed once, whatever
// payload comes later; the debt survives a reopen and PendingUpstream finds
// it across scopes; SettleAnswers drops a payload but keeps its key
// answered; an ended task owes no answers (M-28, M-30).
func testAnswersOwed(t *testing.T, e *env) {
	a := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer a"), Session: "s1"}
	b := sessionmap.Scope{Session: "s2"}
	task, ends, pinned := e.create(a), e.create(b), e.create(b)
	yes := json.RawMessage(`{"action":"accept", "content":{"answer":"yes"}}`)
	msg := json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`)
	fresh, err := e.s.OweAnswers(e.ctx, a, task.ID, map[string]json.RawMessage{"sample-1": msg, "elicit-1": yes})
	if err != nil || !slices.Equal(fresh, []string{"elicit-1", "sample-1"}) {
		t.Fatalf("OweAnswers = %v, %v; want both keys, sorted", fresh, err)
	}
	if fresh, err := e.s.OweAnswers(e.ctx, a, task.ID, map[string]json.RawMessage{"elicit-1": json.RawMessage(`{"action":"decline"}`)}); err != nil || len(fresh) != 0 {
		t.Fatalf("OweAnswers of an answered key = %v, %v; want nothing fresh", fresh, err)
	}
	if fresh, err := e.s.RecordAnswered(e.ctx, a, task.ID, []string{"sample-1"}); err != nil || len(fresh) != 0 {
		t.Fatalf("RecordAnswered of an owed key = %v, %v; want nothing fresh", fresh, err)
	}
	for _, bad := range []string{`"yes"`, `[1]`, `{"action":`} {
		if _, err := e.s.OweAnswers(e.ctx, a, task.ID, map[string]json.RawMessage{"elicit-2": json.RawMessage(bad)}); !errors.Is(err, sessionmap.ErrInvalidArgument) {
			t.Fatalf("OweAnswers(%s) = %v, want ErrInvalidArgument", bad, err)
		}
	}
	_, err = e.s.OweAnswers(e.ctx, b, task.ID, map[string]json.RawMessage{"elicit-2": yes})
	sameNotFound(t, "foreign OweAnswers", err)
	_, err = e.s.SettleAnswers(e.ctx, b, task.ID, []string{"elicit-1"})
	sameNotFound(t, "foreign SettleAnswers", err)
	got := e.get(a, task.ID)
	if !slices.Equal(got.AnsweredKeys, []string{"elicit-1", "sample-1"}) || len(got.OwedAnswers) != 2 ||
		string(got.OwedAnswers["elicit-1"]) != `{"action":"accept","content":{"answer":"yes"}}` {
		t.Fatalf("after OweAnswers: answered %v, owed %s", got.AnsweredKeys, got.OwedAnswers)
	}
	got.OwedAnswers["elicit-1"][2] = 'X'
	if again := e.get(a, task.ID); string(again.OwedAnswers["elicit-1"]) != `{"action":"accept","content":{"answer":"yes"}}` {
		t.Fatalf("store aliased a returned payload: %s", again.OwedAnswers["elicit-1"])
	}

	for _, id := range []string{ends.ID, pinned.ID} {
		if fresh, err := e.s.OweAnswers(e.ctx, b, id, map[string]json.RawMessage{"k": yes}); err != nil || len(fresh) != 1 {
			t.Fatalf("OweAnswers(%s) = %v, %v", id, fresh, err)
		}
	}
	e.clock.Advance(time.Millisecond)
	if got, err := e.s.UpdateStatus(e.ctx, b, ends.ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted, Result: json.RawMessage(`{}`)}); err != nil || got.OwedAnswers != nil {
		t.Fatalf("completion = %+v, %v; want no answers owed", got, err)
	}
	if got, err := e.s.PinCancel(e.ctx, b, pinned.ID); err != nil || got.OwedAnswers != nil || !got.UpstreamCancelPending {
		t.Fatalf("PinCancel = %+v, %v; want a cancel and no answers owed", got, err)
	}
	if fresh, err := e.s.OweAnswers(e.ctx, b, ends.ID, map[string]json.RawMessage{"k2": yes}); err != nil || len(fresh) != 0 {
		t.Fatalf("OweAnswers on a completed task = %v, %v; want nothing", fresh, err)
	}

	e.reopen()
	pending := func() map[string]sessionmap.Task {
		t.Helper()
		owed, err := e.s.PendingUpstream(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]sessionmap.Task{}
		for _, o := range owed {
			out[o.ID] = o
		}
		return out
	}
	p := pending()
	if len(p) != 2 || len(p[task.ID].OwedAnswers) != 2 || string(p[task.ID].OwedAnswers["sample-1"]) != string(msg) || !p[pinned.ID].UpstreamCancelPending {
		t.Fatalf("PendingUpstream after reopen = %+v; want the task owing two answers and the pinned one", p)
	}
	if got, err := e.s.SettleAnswers(e.ctx, a, task.ID, []string{"elicit-1", "never-owed"}); err != nil || len(got.OwedAnswers) != 1 || got.OwedAnswers["sample-1"] == nil ||
		!slices.Equal(got.AnsweredKeys, []string{"elicit-1", "sample-1"}) {
		t.Fatalf("SettleAnswers = %+v, %v; want sample-1 still owed, both keys answered", got, err)
	}
	e.reopen()
	if _, err := e.s.SettleAnswers(e.ctx, a, task.ID, []string{"sample-1"}); err != nil {
		t.Fatal(err)
	}
	if got := e.get(a, task.ID); got.OwedAnswers != nil || len(got.AnsweredKeys) != 2 {
		t.Fatalf("after settling everything: %+v", got)
	}
	if p := pending(); len(p) != 1 || p[pinned.ID].ID == "" {
		t.Fatalf("PendingUpstream after settling = %v; want only the pinned task's cancel", p)
	}
}

func testPinCancel(t *testing.T, e *env) {
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer p"), Session: "s"}
	task := e.create(sc)
	e.clock.Advance(time.Second)
	got, err := e.s.PinCancel(e.ctx, sc, task.ID)
	if err != nil || got.Status != sessionmap.StatusCancelled || !got.CancelPinned || !got.LastUpdatedAt.Equal(e.clock.Now()) {
		t.Fatalf("PinCancel = %+v, %v", got, err)
	}
	e.reopen()
	// The upstream finishing later does not undo the pinned cancel (L-59).
	got, err = e.s.UpdateStatus(e.ctx, sc, task.ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted, Result: json.RawMessage(`{}`)})
	if err != nil || got.Status != sessionmap.StatusCancelled || !got.CancelPinned || got.Result != nil {
		t.Fatalf("completion after pin = %+v, %v", got, err)
	}
	// Cancelling a terminal task is ErrTerminal, with the record (L-55).
	got, err = e.s.PinCancel(e.ctx, sc, task.ID)
	if !errors.Is(err, sessionmap.ErrTerminal) || got.ID != task.ID || got.Status != sessionmap.StatusCancelled {
		t.Fatalf("second PinCancel = %+v, %v", got, err)
	}
	other := e.create(sc)
	if _, err := e.s.UpdateStatus(e.ctx, sc, other.ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	got, err = e.s.PinCancel(e.ctx, sc, other.ID)
	if !errors.Is(err, sessionmap.ErrTerminal) || got.Status != sessionmap.StatusCompleted || got.CancelPinned {
		t.Fatalf("PinCancel on completed = %+v, %v", got, err)
	}
}

func testAnsweredKeys(t *testing.T, e *env) {
	sc := sessionmap.Scope{Session: "s"}
	task := e.create(sc)
	record := func(keys []string, want []string) {
		t.Helper()
		got, err := e.s.RecordAnswered(e.ctx, sc, task.ID, keys)
		if err != nil {
			t.Fatalf("RecordAnswered(%v): %v", keys, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("RecordAnswered(%v) = %v, want %v", keys, got, want)
		}
	}
	record([]string{"elicit-2", "elicit-1"}, []string{"elicit-2", "elicit-1"})
	record([]string{"elicit-1", "sample-1", "sample-1"}, []string{"sample-1"})
	record(nil, nil)
	e.reopen()
	record([]string{"elicit-1", "elicit-2", "sample-1"}, nil)
	if got := e.get(sc, task.ID).AnsweredKeys; !slices.Equal(got, []string{"elicit-1", "elicit-2", "sample-1"}) {
		t.Fatalf("AnsweredKeys = %v", got)
	}
	if _, err := e.s.UpdateStatus(e.ctx, sc, task.ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	record([]string{"late"}, nil) // nothing to answer on a terminal task
}

func testAnsweredConcurrent(t *testing.T, e *env) {
	sc := sessionmap.Scope{Session: "s"}
	task := e.create(sc)
	const workers, keys = 6, 12
	var all []string
	for k := range keys {
		all = append(all, fmt.Sprintf("k%02d", k))
	}
	var mu sync.Mutex
	var fresh []string
	var wg sync.WaitGroup
	errs := make(chan error, workers*keys)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range keys {
				k := all[(i+w*5)%keys]
				got, err := e.s.RecordAnswered(e.ctx, sc, task.ID, []string{k})
				if err != nil {
					errs <- err
					return
				}
				// Concurrent status updates contend on the same record.
				st := sessionmap.StatusWorking
				if i%2 == 0 {
					st = sessionmap.StatusInputRequired
				}
				if _, err := e.s.UpdateStatus(e.ctx, sc, task.ID, sessionmap.Snapshot{Status: st, StatusMessage: k}); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				fresh = append(fresh, got...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent op: %v", err)
	}
	slices.Sort(fresh)
	if !slices.Equal(fresh, all) {
		t.Fatalf("keys reported new = %v, want each of %v exactly once", fresh, all)
	}
	if got := e.get(sc, task.ID).AnsweredKeys; !slices.Equal(got, all) {
		t.Fatalf("AnsweredKeys = %v", got)
	}
}

func testPagination(t *testing.T, e *env) {
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer pager"), Session: "s"}
	var created []sessionmap.Task
	for i := range 25 {
		if i%8 != 3 { // some tasks share a CreatedAt: the id breaks the tie
			e.clock.Advance(time.Millisecond)
		}
		created = append(created, e.create(sc))
	}
	w := world{scopes: []sessionmap.Scope{sc}, tasks: map[sessionmap.Scope][]sessionmap.Task{sc: created}}
	want := w.visibleTo(sc)

	p1, err := e.s.ListTasks(e.ctx, sc, 10, "")
	if err != nil || len(p1.Tasks) != 10 || p1.NextCursor == "" {
		t.Fatalf("page 1 = %d tasks, cursor %q, %v", len(p1.Tasks), p1.NextCursor, err)
	}
	// New tasks arriving between pages do not shift later pages (L-54).
	e.clock.Advance(time.Second)
	newer := e.create(sc)
	e.reopen() // and cursors survive a restart
	p2, err := e.s.ListTasks(e.ctx, sc, 10, p1.NextCursor)
	if err != nil || len(p2.Tasks) != 10 || p2.NextCursor == "" {
		t.Fatalf("page 2 = %d tasks, cursor %q, %v", len(p2.Tasks), p2.NextCursor, err)
	}
	p3, err := e.s.ListTasks(e.ctx, sc, 10, p2.NextCursor)
	if err != nil || len(p3.Tasks) != 5 || p3.NextCursor != "" {
		t.Fatalf("page 3 = %d tasks, cursor %q, %v", len(p3.Tasks), p3.NextCursor, err)
	}
	got := append(append(ids(p1.Tasks), ids(p2.Tasks)...), ids(p3.Tasks)...)
	if !slices.Equal(got, want) {
		t.Fatalf("pages = %v\nwant    %v", got, want)
	}
	// The same cursor gives the same page again.
	again, err := e.s.ListTasks(e.ctx, sc, 10, p1.NextCursor)
	if err != nil || !slices.Equal(ids(again.Tasks), ids(p2.Tasks)) {
		t.Fatalf("repeated page 2 = %v, %v", ids(again.Tasks), err)
	}
	// A fresh listing starts with the newest task; exactly 26 tasks exist, so
	// a page of 26 has no next cursor (L-50) and a page of 25 has one.
	first, err := e.s.ListTasks(e.ctx, sc, 26, "")
	if err != nil || len(first.Tasks) != 26 || first.Tasks[0].ID != newer.ID || first.NextCursor != "" {
		t.Fatalf("full page = %d tasks, first %v, cursor %q, %v", len(first.Tasks), first.Tasks[0].ID, first.NextCursor, err)
	}
	if p, err := e.s.ListTasks(e.ctx, sc, 25, ""); err != nil || p.NextCursor == "" {
		t.Fatalf("page of 25 of 26: cursor %q, %v", p.NextCursor, err)
	}
	if p, err := e.s.ListTasks(e.ctx, sc, 0, ""); err != nil || len(p.Tasks) != 26 {
		t.Fatalf("default page size listed %d, %v", len(p.Tasks), err)
	}
	empty, err := e.s.ListTasks(e.ctx, sessionmap.Scope{Session: "nobody"}, 10, "")
	if err != nil || len(empty.Tasks) != 0 || empty.NextCursor != "" {
		t.Fatalf("empty scope list = %+v, %v", empty, err)
	}
}

func testCursorTamper(t *testing.T, e *env) {
	sc := sessionmap.Scope{Session: "s"}
	for range 3 {
		e.clock.Advance(time.Millisecond)
		e.create(sc)
	}
	p, err := e.s.ListTasks(e.ctx, sc, 1, "")
	if err != nil || p.NextCursor == "" {
		t.Fatalf("ListTasks = %+v, %v", p, err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(p.NextCursor)
	if err != nil {
		// Not base64url: tamper with the string itself instead.
		raw = []byte(p.NextCursor)
	}
	for i := range raw {
		for _, bit := range []byte{0x01, 0x80} {
			bad := slices.Clone(raw)
			bad[i] ^= bit
			c := base64.RawURLEncoding.EncodeToString(bad)
			if err != nil {
				c = string(bad)
			}
			if _, lerr := e.s.ListTasks(e.ctx, sc, 1, c); lerr != sessionmap.ErrInvalidCursor {
				t.Fatalf("cursor with byte %d ^ %#x = %v, want ErrInvalidCursor", i, bit, lerr)
			}
		}
	}
	for _, c := range []string{"x", "!!!!", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", p.NextCursor[:len(p.NextCursor)-1], p.NextCursor + "A"} {
		if _, err := e.s.ListTasks(e.ctx, sc, 1, c); err != sessionmap.ErrInvalidCursor {
			t.Fatalf("cursor %q = %v, want ErrInvalidCursor", c, err)
		}
	}
	if _, err := e.s.ListTasks(e.ctx, sc, 1, p.NextCursor); err != nil {
		t.Fatalf("genuine cursor rejected: %v", err)
	}
}

func testExpiry(t *testing.T, e *env) {
	sc := sessionmap.Scope{Session: "s"}
	short := newTask(sc, e.clock.Now())
	short.TTLMs = i64(60_000)
	short.Status = sessionmap.StatusWorking // expiry counts from creation, whatever the status (L-64)
	forever := newTask(sc, e.clock.Now())
	forever.TTLMs = nil
	for _, x := range []sessionmap.Task{short, forever} {
		if err := e.s.CreateTask(e.ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(59 * time.Second)
	e.get(sc, short.ID)
	if got := e.listAll(sc, 10); len(got) != 2 {
		t.Fatalf("before expiry listed %v", got)
	}
	e.clock.Advance(time.Second)
	_, err := e.s.GetTask(e.ctx, sc, short.ID)
	sameNotFound(t, "GetTask expired", err)
	_, err = e.s.UpdateStatus(e.ctx, sc, short.ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted})
	sameNotFound(t, "UpdateStatus expired", err)
	_, err = e.s.PinCancel(e.ctx, sc, short.ID)
	sameNotFound(t, "PinCancel expired", err)
	_, err = e.s.RecordAnswered(e.ctx, sc, short.ID, []string{"k"})
	sameNotFound(t, "RecordAnswered expired", err)
	if got := e.listAll(sc, 10); !slices.Equal(got, []string{forever.ID}) {
		t.Fatalf("after expiry listed %v, want only the unlimited task", got)
	}
	e.clock.Advance(1000 * time.Hour)
	e.get(sc, forever.ID)
}

func testDeleteSessionTasks(t *testing.T, e *env) {
	p := sessionmap.PrincipalFromAuthorization("Bearer d")
	s1, s2 := sessionmap.Scope{Principal: p, Session: "s1"}, sessionmap.Scope{Principal: p, Session: "s2"}
	var keep []string
	for range 3 {
		e.create(s1)
		keep = append(keep, e.create(s2).ID)
	}
	n, err := e.s.DeleteSessionTasks(e.ctx, s1)
	if err != nil || n != 3 {
		t.Fatalf("DeleteSessionTasks = %d, %v, want 3", n, err)
	}
	got := e.listAll(s2, 10)
	slices.Sort(got)
	slices.Sort(keep)
	if !slices.Equal(got, keep) {
		t.Fatalf("after delete listed %v, want %v", got, keep)
	}
	if n, err := e.s.DeleteSessionTasks(e.ctx, s1); err != nil || n != 0 {
		t.Fatalf("second DeleteSessionTasks = %d, %v", n, err)
	}
}

func testUnknownIDs(t *testing.T, e *env) {
	sc := sessionmap.Scope{Session: "s"}
	for _, id := range []string{"", "nope", string(make([]byte, sessionmap.MaxIDLen+10))} {
		_, err := e.s.GetTask(e.ctx, sc, id)
		sameNotFound(t, fmt.Sprintf("GetTask(len %d)", len(id)), err)
	}
	task := e.create(sc)
	_, err := e.s.GetTask(e.ctx, sessionmap.Scope{}, task.ID)
	sameNotFound(t, "GetTask with empty scope", err)
}

// The list view of every task agrees with GetTask after every kind of write.
func testListMatchesGet(t *testing.T, e *env) {
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer lv"), Session: "s"}
	var tasks []sessionmap.Task
	for i := range 4 {
		e.clock.Advance(time.Millisecond)
		x := newTask(sc, e.clock.Now())
		if i%2 == 0 {
			x.TTLMs = i64(int64(3_600_000 + i))
		}
		if err := e.s.CreateTask(e.ctx, x); err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, x)
	}
	e.clock.Advance(time.Second)
	if _, err := e.s.UpdateStatus(e.ctx, sc, tasks[0].ID, sessionmap.Snapshot{Status: sessionmap.StatusInputRequired,
		StatusMessage: "say \"yes\" — ünïcode", PollIntervalMs: i64(7000)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.UpdateStatus(e.ctx, sc, tasks[1].ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted,
		Result: json.RawMessage(`{"content":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.PinCancel(e.ctx, sc, tasks[2].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.RecordAnswered(e.ctx, sc, tasks[3].ID, []string{"k"}); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		p, err := e.s.ListTasks(e.ctx, sc, 10, "")
		if err != nil || len(p.Tasks) != len(tasks) {
			t.Fatalf("ListTasks = %d tasks, %v", len(p.Tasks), err)
		}
		for _, l := range p.Tasks {
			g := e.get(sc, l.ID)
			if l.Scope != g.Scope || l.Status != g.Status || l.StatusMessage != g.StatusMessage ||
				!l.CreatedAt.Equal(g.CreatedAt) || !l.LastUpdatedAt.Equal(g.LastUpdatedAt) ||
				!eqPtr(l.TTLMs, g.TTLMs) || !eqPtr(l.PollIntervalMs, g.PollIntervalMs) || l.CancelPinned != g.CancelPinned {
				t.Fatalf("list entry disagrees with GetTask\nlist %+v\nget  %+v", l, g)
			}
		}
	}
	check()
	e.reopen()
	check()
}

func eqPtr(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// Creates racing for one id (two replicas handed the same id, a retried
// request): exactly one succeeds, the others get ErrExists, and the stored
// record is the winner's whole record, never a mix. With a shared store the
// racers may be different processes; here they are goroutines.
func testConcurrentCreates(t *testing.T, e *env) {
	const racers = 8
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer race"), Session: "s"}
	id := sessionmap.NewTaskID()
	sid := "race-" + id
	var wg sync.WaitGroup
	taskErrs, sessErrs := make([]error, racers), make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := newTask(sc, e.clock.Now())
			x.ID, x.StatusMessage = id, fmt.Sprintf("racer %d", i)
			taskErrs[i] = e.s.CreateTask(e.ctx, x)
			sessErrs[i] = e.s.CreateSession(e.ctx, sessionmap.Session{ID: sid, Principal: sc.Principal,
				Era: era.Legacy, LogLevel: fmt.Sprintf("racer %d", i)})
		}()
	}
	wg.Wait()
	winner := func(what string, errs []error) int {
		t.Helper()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("%s: racers %d and %d both succeeded", what, won, i)
			case err == nil:
				won = i
			case !errors.Is(err, sessionmap.ErrExists):
				t.Fatalf("%s: racer %d: %v, want ErrExists", what, i, err)
			}
		}
		if won < 0 {
			t.Fatalf("%s: no racer succeeded", what)
		}
		return won
	}
	wt, ws := winner("CreateTask", taskErrs), winner("CreateSession", sessErrs)
	if got := e.get(sc, id); got.StatusMessage != fmt.Sprintf("racer %d", wt) {
		t.Fatalf("stored task is %q, the winner was racer %d", got.StatusMessage, wt)
	}
	if got, err := e.s.GetSession(e.ctx, sessionmap.Scope{Principal: sc.Principal, Session: sid}); err != nil ||
		got.LogLevel != fmt.Sprintf("racer %d", ws) {
		t.Fatalf("stored session = %+v, %v; the winner was racer %d", got, err, ws)
	}
	if got := e.listAll(sc, 10); !slices.Equal(got, []string{id}) {
		t.Fatalf("listed %v, want the one task once", got)
	}
}
