package legacyface_test

// Conformance rows of docs/CONFORMANCE.md that no other end-to-end test of
// the legacy face pinned down on its own: each test names the checklist ids
// (L-xx, M-xx; docs/CONFORMANCE.md) it proves and fails when the
// face breaks them.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/sessionmap/storetest"
)

// listPage reads a tasks/list result: the ids in order and nextCursor.
func listPage(t *testing.T, r *reply) (ids []string, next string) {
	t.Helper()
	var res struct {
		Tasks []struct {
			TaskID string `json:"taskId"`
		} `json:"tasks"`
		NextCursor *string `json:"nextCursor"`
	}
	if r.Err != nil || json.Unmarshal(r.Result, &res) != nil {
		t.Fatalf("not a ListTasksResult: HTTP %d %s %s", r.Status, r.Envelope, r.Body)
	}
	for _, tk := range res.Tasks {
		ids = append(ids, tk.TaskID)
	}
	if res.NextCursor != nil {
		next = *res.NextCursor
	}
	return ids, next
}

// L-49, L-50, L-54: tasks/list pages with an opaque cursor, says nextCursor
// exactly when more tasks follow, and a cursor keeps working (no task lost
// or repeated) when tasks are created between two pages.
func TestTasksListPagesWithCursor_L49_L50_L54(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{ListPageSize: 2})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	var created []string
	for _, text := range []string{"one", "two", "three"} {
		created = append(created, taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": text}, "task": map[string]any{}})))
	}
	first, cursor := listPage(t, c.call(ctx, "tasks/list", nil))
	if len(first) != 2 || cursor == "" {
		t.Fatalf("first page %v, nextCursor %q: want two tasks and a cursor (L-50)", first, cursor)
	}
	if again, cur2 := listPage(t, c.call(ctx, "tasks/list", map[string]any{})); !slices.Equal(again, first) || cur2 != cursor {
		t.Errorf("the first page changed without writes: %v %q, then %v %q", first, cursor, again, cur2)
	}
	// A task created between the pages does not disturb the cursor (L-54).
	late := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "late"}, "task": map[string]any{}}))
	second, end := listPage(t, c.call(ctx, "tasks/list", map[string]any{"cursor": cursor}))
	if end != "" {
		t.Errorf("last page has nextCursor %q (L-50: only when more tasks are available)", end)
	}
	all := append(append([]string(nil), first...), second...)
	slices.Sort(all)
	want := append([]string(nil), created...)
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Errorf("pages %v + %v, want exactly %v once each", first, second, created)
	}
	if fresh, _ := listPage(t, c.call(ctx, "tasks/list", nil)); len(fresh) == 0 || fresh[0] != late {
		t.Errorf("a new first page %v does not start with the newest task %s", fresh, late)
	}
	c.checkReceived(t)
}

var base64URL144 = regexp.MustCompile(`^[A-Za-z0-9_-]{24,}$`)

// L-13, L-15, L-16, L-70: the CreateTaskResult comes back while the
// upstream work still runs; its id is minted by the bridge (≥ 144 random
// bits, base64url), unique, and not the upstream's id, which never reaches
// the client.
func TestTaskIDsMintedByTheBridge_L13_L15_L16_L70(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	seen := map[string]bool{}
	var upIDs []string
	for i := 0; i < 3; i++ {
		id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
		upID := upstreamTaskID(t, br.b.Store(), id)
		if s := up.srv.Status(upID); s != "working" {
			t.Errorf("upstream task %s by the time the client had its CreateTaskResult; want working (L-13: reply without waiting for the work)", s)
		}
		if id == upID || !base64URL144.MatchString(id) || seen[id] {
			t.Errorf("task id %q (upstream %q, seen %v): want a fresh bridge-minted id of ≥ 144 bits (L-15, L-16, L-70)", id, upID, seen[id])
		}
		seen[id] = true
		upIDs = append(upIDs, upID)
	}
	for _, m := range c.allReceived() {
		for _, upID := range upIDs {
			if bytes.Contains(m, []byte(upID)) {
				t.Errorf("the upstream's task id reached the client: %s", m)
			}
		}
	}
}

// L-85: a notifications/cancelled for the tools/call that created a task,
// sent after its CreateTaskResult, is ignored: the task stays working and
// still completes with its result.
func TestCancelOfCreatingRequestIgnored_L85(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	c.mu.Lock()
	c.next = 700 // the tools/call gets id 701
	c.mu.Unlock()
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "kept"}, "task": map[string]any{}}))
	if n := c.notify(ctx, "notifications/cancelled", map[string]any{"requestId": 701, "reason": "user gave up"}); n.Status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: HTTP %d %s", n.Status, n.Body)
	}
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
		t.Errorf("task after notifications/cancelled of its creating request: %s, want working", s)
	}
	if n := len(up.rec.byMethod("tasks/cancel")); n != 0 {
		t.Errorf("%d upstream tasks/cancel for a notifications/cancelled, want none", n)
	}
	up.srv.CompleteNow(upstreamTaskID(t, br.b.Store(), id))
	if r := c.call(ctx, "tasks/result", map[string]any{"taskId": id}); r.Err != nil || !bytes.Contains(r.Result, []byte(`"kept"`)) {
		t.Errorf("tasks/result: %s", r.Envelope)
	}
}

// L-57, M-31: a legacy tasks/cancel becomes an upstream tasks/cancel for the
// upstream's task id (never notifications/cancelled), and the upstream task
// does stop.
func TestCancelForwardedAsTasksCancel_L57_M31(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	upID := upstreamTaskID(t, br.b.Store(), id)
	if s := statusOf(t, c.call(ctx, "tasks/cancel", map[string]any{"taskId": id})); s != "cancelled" {
		t.Fatalf("tasks/cancel answered %s", s)
	}
	// The outbox sends the upstream cancel after the answer (L-58, L-59).
	up.rec.awaitServed(t, ctx, "tasks/cancel")
	cancels := up.rec.byMethod("tasks/cancel")
	if len(cancels) != 1 || !bytes.Contains(cancels[0].Body, []byte(`"taskId":"`+upID+`"`)) {
		t.Errorf("upstream tasks/cancel %d times, want once for %s: %v", len(cancels), upID, cancels)
	}
	if n := len(up.rec.byMethod("notifications/cancelled")); n != 0 {
		t.Errorf("%d notifications/cancelled upstream, want none (M-31)", n)
	}
	if s := up.srv.Status(upID); s != "cancelled" {
		t.Errorf("upstream task %s after the cancel, want cancelled (L-57: try to stop execution)", s)
	}
}

// L-74, L-76: the ttl the bridge grants its own (synthesized) tasks is capped
// at MaxTaskTTL, and docs/MIGRATION.md states the cap operators get by
// default.
func TestMaxTTLEnforcedAndDocumented_L74_L76(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{MaxTaskTTL: time.Hour})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	r := c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "task": map[string]any{"ttl": 10 * 24 * 3600 * 1000}})
	var res struct {
		Task struct {
			TTL *int64 `json:"ttl"`
		} `json:"task"`
	}
	if r.Err != nil || json.Unmarshal(r.Result, &res) != nil || res.Task.TTL == nil || *res.Task.TTL != time.Hour.Milliseconds() {
		t.Errorf("a 10-day ttl request with MaxTaskTTL 1h: %s, want ttl %d", r.Envelope, time.Hour.Milliseconds())
	}
	if legacyface.DefaultMaxTaskTTL != 24*time.Hour {
		t.Fatalf("DefaultMaxTaskTTL is %v; docs/MIGRATION.md says 24 hours — update both", legacyface.DefaultMaxTaskTTL)
	}
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "MIGRATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?i)capped at 24 hours`).Match(guide) {
		t.Error("docs/MIGRATION.md no longer documents the maximum ttl (\"capped at 24 hours\", L-76)")
	}
	// L-77: the guide states the per-requestor concurrency limit.
	if !regexp.MustCompile(`(?i)concurrent tasks per requestor are limited`).Match(guide) ||
		!regexp.MustCompile(`--max-tasks-per-principal\x60 \(256\)`).Match(guide) || legacyface.DefaultMaxTasksPerPrincipal != 256 {
		t.Error("docs/MIGRATION.md no longer documents the concurrent-task limit per requestor (L-77)")
	}
}

// L-62, L-63: a plain tools/call the upstream turned into a task is polled
// here; the progress notifications sent meanwhile use the client's own
// progressToken, and none is sent once the task is terminal (the last
// message on the stream is the response; no progress reports a terminal
// status).
func TestProgressEndsWithTheTask_L62_L63(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	c.drainEvents()
	done := make(chan *reply, 1)
	go func() {
		done <- c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "fin"},
			"_meta": map[string]any{"progressToken": 42}})
	}()
	c.awaitEvent(ctx, "note:notifications/progress")
	ids := up.srv.TaskIDs()
	if len(ids) != 1 {
		t.Fatalf("upstream tasks %v", ids)
	}
	up.srv.CompleteNow(ids[0])
	r := <-done
	if r.Err != nil || !bytes.Contains(r.Result, []byte(`"fin"`)) {
		t.Fatalf("result %s", r.Envelope)
	}
	if len(r.Notes) == 0 {
		t.Fatal("no progress notification")
	}
	for _, n := range r.Notes {
		var p struct {
			Method string `json:"method"`
			Params struct {
				ProgressToken json.RawMessage `json:"progressToken"`
				Message       string          `json:"message"`
			} `json:"params"`
		}
		_ = json.Unmarshal(n, &p)
		if p.Method != "notifications/progress" {
			continue
		}
		if string(p.Params.ProgressToken) != "42" {
			t.Errorf("progress with token %s, want the request's 42 (L-62)", p.Params.ProgressToken)
		}
		if strings.Contains(strings.ToLower(p.Params.Message), "complet") {
			t.Errorf("progress after the task was terminal (L-63): %s", n)
		}
	}
	c.checkReceived(t)
}

// L-64, L-65, M-27 (the bridge's own backstop): once createdAt + ttl has
// passed on the store's clock, the task is gone: tasks/get, tasks/result and
// tasks/cancel answer -32602 exactly as for an unknown id, and tasks/list
// no longer shows it.
func TestExpiredTaskIsGone_L64_L65(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	clk := storetest.NewClock()
	br := startBridge(t, up, legacyface.Config{Store: sessionmap.NewMemory(sessionmap.WithClock(clk.Now))})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "task": map[string]any{"ttl": 1000}}))
	if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "completed" {
		t.Fatalf("before expiry: %s", s)
	}
	clk.Advance(2 * time.Second)
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		gone := c.call(ctx, m, map[string]any{"taskId": id})
		unknown := c.call(ctx, m, map[string]any{"taskId": "never-was"})
		if gone.Err == nil || gone.Err.Code != rpc.CodeInvalidParams || unknown.Err == nil {
			t.Fatalf("%s of an expired task: %s", m, gone.Envelope)
		}
		if g, u := strings.ReplaceAll(gone.Err.Message, id, "ID"), strings.ReplaceAll(unknown.Err.Message, "never-was", "ID"); g != u {
			t.Errorf("%s: expired %q, unknown %q", m, g, u)
		}
	}
	if ids, _ := listPage(t, c.call(ctx, "tasks/list", nil)); slices.Contains(ids, id) {
		t.Errorf("tasks/list still shows the expired task: %v", ids)
	}
}

// L-20, L-74, L-76: an upstream task's ttl is the smaller of the ttl the
// client asked for and the upstream's own ttlMs (3000 is honoured; 7200000
// becomes the demo upstream's 3600000), and docs/MIGRATION.md states that
// rule with this very example.
func TestUpstreamTaskTTLIsTheSmallerOfRequestAndUpstream_L20_L74(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{}) // ttlMs 3600000
	br := startBridge(t, up, legacyface.Config{})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	for _, tc := range []struct{ asked, want int64 }{{3000, 3000}, {7200000, 3600000}} {
		r := c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{"ttl": tc.asked}})
		var res struct {
			Task struct {
				TTL *int64 `json:"ttl"`
			} `json:"task"`
		}
		if r.Err != nil || json.Unmarshal(r.Result, &res) != nil || res.Task.TTL == nil || *res.Task.TTL != tc.want {
			t.Errorf("task.ttl %d against an upstream ttlMs of 3600000: %s, want ttl %d", tc.asked, r.Envelope, tc.want)
		}
	}
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "MIGRATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"smaller of the requested `ttl` and the upstream's `ttlMs`", "`task.ttl: 3000` gives `ttl: 3000`", "`task.ttl: 7200000` gives `ttl: 3600000`"} {
		if !strings.Contains(strings.Join(strings.Fields(string(guide)), " "), want) {
			t.Errorf("docs/MIGRATION.md does not say %q (L-76: document the ttl the bridge grants)", want)
		}
	}
}
