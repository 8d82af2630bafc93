package legacyface_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

type auditSink struct{ audit.Memory }

func (s *auditSink) find(action, task string) (audit.Event, bool) {
	for _, e := range s.Events() {
		if e.Action == action && e.Task == task {
			return e, true
		}
	}
	return audit.Event{}, false
}

// L-79, L-80: task creation, input answers, result delivery, cancel and
// task ends are audited with the principal hash, the session and the task
// id; the credential itself never appears.
func TestAuditLogL79L80(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startUpstream(t, demo.Options{})
	sink := &auditSink{}
	br := startBridge(t, up, legacyface.Config{Audit: sink})
	const token = "Bearer audit-secret-token"
	c := newRawClient(t, br.url)
	c.authz = token
	c.initialize(ctx, nil)
	c.setHandler(func(string, json.RawMessage) (any, *rpc.Error) {
		return map[string]any{"action": "accept", "content": map[string]any{"answer": "Ada"}}, nil
	})
	asked := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "elicit_task", "arguments": map[string]any{"question": "Name?"}, "task": map[string]any{}}))
	if r := c.call(ctx, "tasks/result", map[string]any{"taskId": asked}); r.Err != nil {
		t.Fatalf("tasks/result: %s", r.Envelope)
	}
	slow := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 60000, "text": "x"}, "task": map[string]any{}}))
	c.call(ctx, "tasks/cancel", map[string]any{"taskId": slow})
	c.call(ctx, "tasks/cancel", map[string]any{"taskId": slow}) // refused: terminal

	principal := sessionmap.PrincipalFromAuthorization(token)
	for _, want := range []struct{ action, task, outcome string }{
		{audit.ActionCreate, asked, "created"},
		{audit.ActionInput, asked, "accept"},
		{audit.ActionResult, asked, "ok"},
		{audit.ActionEnd, asked, "completed"},
		{audit.ActionCreate, slow, "created"},
		{audit.ActionCancel, slow, "cancelled"},
	} {
		e, ok := sink.find(want.action, want.task)
		if !ok {
			t.Errorf("no %s event for task %s", want.action, want.task)
			continue
		}
		if e.Outcome != want.outcome || e.Principal != principal || e.Session != c.sessionID() || e.Era != "legacy" || e.Time.IsZero() {
			t.Errorf("%s event = %+v, want outcome %q, principal %s, session %s", want.action, e, want.outcome, principal, c.sessionID())
		}
	}
	refused := 0
	for _, e := range sink.Events() {
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), "audit-secret-token") {
			t.Errorf("audit event carries the credential: %s", b)
		}
		if e.Action == audit.ActionCancel && e.Outcome == "error" && e.Code == rpc.CodeInvalidParams {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d refused cancels audited, want 1", refused)
	}
}
