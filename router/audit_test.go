package router_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// A modern client of the modern face is audited (L-79): task creation,
// input answers, cancel and the delivery of a terminal state, with era
// modern and the principal hash, never the token (L-80).
func TestModernFaceAudit(t *testing.T) {
	const token = "Bearer audit-secret-token-0123456789"
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	up, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	sink := &audit.Memory{}
	br := startBridge(t, router.Config{Upstream: up, UpstreamEra: "legacy",
		Modern: func(o *modernface.Options) { o.Audit = sink }})
	c := newModernClient(t, br.url, "audited-app")
	c.authz = token
	ctx := ctxT(t)

	id := field(t, mustOK(t, "tools/call multi_input", c.call(ctx, "tools/call", map[string]any{"name": "multi_input"})), "taskId")
	keys := inputKeys(t, pollTask(t, ctx, c, id, func(res json.RawMessage) bool { return len(inputKeys(t, res)) == 2 }))
	mustOK(t, "tasks/update", c.call(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		keys[0]: accept(map[string]any{"name": "Alice", "confirm": true}),
		keys[1]: accept(map[string]any{"name": "Alice", "confirm": true})}}))
	if got := field(t, pollTask(t, ctx, c, id, func(res json.RawMessage) bool { return terminal(t, res) }), "status"); got != "completed" {
		t.Fatalf("multi_input ended %s; want completed", got)
	}
	slow := field(t, mustOK(t, "tools/call slow_required", c.call(ctx, "tools/call", map[string]any{
		"name": "slow_required", "arguments": map[string]any{"ms": 600000, "text": "x"}})), "taskId")
	mustOK(t, "tasks/cancel", c.call(ctx, "tasks/cancel", map[string]any{"taskId": slow}))
	if r := c.call(ctx, "tasks/cancel", map[string]any{"taskId": "no-such-task"}); r.Err == nil {
		t.Fatalf("tasks/cancel of an unknown id: %v; want an error", r)
	}

	// The principal is keyed with the store's principal key.
	principal := sessionmap.KeyPrincipal(br.srv.Store().(sessionmap.PrincipalKeyer).PrincipalKey(),
		sessionmap.PrincipalFromAuthorization(token))
	type key struct{ action, task, outcome string }
	got := map[key]int{}
	for _, e := range sink.Events() {
		if e.Era != "modern" || e.Principal != principal || e.Session != "" || e.Time.IsZero() {
			t.Errorf("audit event %+v; want era modern, the principal hash, no session, a time", e)
		}
		got[key{e.Action, e.Task, e.Outcome}]++
	}
	for _, want := range []key{
		{audit.ActionCreate, id, "created"}, {audit.ActionInput, id, "accept"}, {audit.ActionResult, id, "completed"},
		{audit.ActionCreate, slow, "created"}, {audit.ActionCancel, slow, "cancelled"}, {audit.ActionCancel, "no-such-task", "error"},
	} {
		if got[want] == 0 {
			t.Errorf("no audit event %+v; have %v", want, got)
		}
	}
	if got[key{audit.ActionInput, id, "accept"}] != 2 {
		t.Errorf("input events %d; want one per answer (2)", got[key{audit.ActionInput, id, "accept"}])
	}
	b, _ := json.Marshal(sink.Events())
	if strings.Contains(string(b), "audit-secret-token") {
		t.Fatalf("the audit records carry the token:\n%s", b)
	}
}
