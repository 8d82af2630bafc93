package legacyface

import (
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// audit records one action of this session's client on task id (L-79; the
// principal hash, never the credential, L-80).
func (s *session) audit(action, task, tool, outcome string, code int64) {
	audit.Record(s.b.cfg.Audit, audit.Event{Action: action, Era: "legacy", Principal: s.principal,
		Session: s.id, Task: task, Tool: tool, Outcome: outcome, Code: code})
}

// auditErr is audit with the outcome of err.
func (s *session) auditErr(action, task, tool string, err error) {
	o, c := audit.Outcome(err)
	s.audit(action, task, tool, o, c)
}

// taskEnded reports a task the bridge saw end: an INFO line for a failure
// (operators see tasks failing without reading metrics; ids stay out of
// non-debug logs) and an audit record (L-79 completion).
func (b *Bridge) taskEnded(rec sessionmap.Task) {
	if rec.Status == sessionmap.StatusFailed {
		b.log.Info("task failed", "upstream", b.target, "tool", rec.ToolName, "reason", rec.StatusMessage)
	}
	b.log.Debug("face: task ended", "task", rec.ID, "status", rec.Status)
	audit.Record(b.cfg.Audit, audit.Event{Action: audit.ActionEnd, Era: "legacy", Principal: rec.Scope.Principal,
		Session: rec.Scope.Session, Task: rec.ID, Tool: rec.ToolName, Outcome: string(rec.Status)})
}
