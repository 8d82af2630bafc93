package legacyface

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// A client answers an input request relayed on a tasks/result stream with a
// separate POST (a JSON-RPC response, L-46). With several bridge processes
// on one store behind a load balancer without affinity, that POST can reach
// a process that did not ask and holds no waiter for it. So each question
// asked on the lean path is recorded before it goes out, as a session
// record owned by sessionmap.BridgePrincipal (no client can read it) named
// by a hash of the client session and the question's JSON-RPC id. A process
// receiving an answer it has no waiter for reads that record and sends the
// answer upstream itself, through the same once-per-key path (OweAnswers,
// then the outbox; M-30, docs/ARCHITECTURE.md, Each input key is asked once
// and answered once). The process that asked stops waiting
// for a key once the store holds its answer (await).

// storedQuestion is one recorded question.
type storedQuestion struct {
	Session   string              `json:"session"`   // the client session that was asked
	Principal string              `json:"principal"` // its principal (a credential hash)
	Task      sessionmap.Scope    `json:"taskScope"`
	TaskID    string              `json:"taskId"`
	Key       string              `json:"key"`
	Request   modern.InputRequest `json:"request"` // what the answer is translated against
}

// questionScope names the record of the question id asked in session sid.
func questionScope(sid string, id jsonrpc.ID) sessionmap.Scope {
	sum := sha256.Sum256([]byte(callKey(sid, id)))
	return sessionmap.Scope{Principal: sessionmap.BridgePrincipal, Session: "legacy-question-" + hex.EncodeToString(sum[:16])}
}

// recordQuestion stores the question id of key of rec, asked in s, so any
// process can take the answer. A question presented again keeps its id
// (presentIDs): the record is already there, and again says so.
func (s *session) recordQuestion(ctx context.Context, rec sessionmap.Task, key string, id jsonrpc.ID, req modern.InputRequest) (again bool, err error) {
	body, err := json.Marshal(storedQuestion{Session: s.id, Principal: s.principal, Task: rec.Scope, TaskID: rec.ID, Key: key, Request: req})
	if err != nil {
		return false, err
	}
	idle := 24 * time.Hour
	if rec.TTLMs != nil && *rec.TTLMs > 0 {
		idle = time.Duration(*rec.TTLMs) * time.Millisecond
	}
	sc := questionScope(s.id, id)
	err = s.b.store.CreateSession(ctx, sessionmap.Session{ID: sc.Session, Principal: sc.Principal, Era: era.Legacy,
		InitializeParams: body, IdleTimeoutMs: idle.Milliseconds()})
	if errors.Is(err, sessionmap.ErrExists) {
		return true, nil
	}
	return false, err
}

// questionGrace is how long a question this session was already shown (on
// a stream that broke, perhaps on another replica) waits for an answer in
// flight before it is shown again. The client may have answered it with a
// POST that is still stalled in a store write (a Redis failover stalls
// writes for 2–4 s, --redis-failover-timeout bounds it) or that is being
// taken by another replica: showing it again then asks twice for one key
// (M-30). A client that never saw it waits this long for it once more.
const questionGrace = 5 * time.Second

// answeredMeanwhile waits, for a question shown before (recordQuestion said
// again), up to questionGrace for the store to hold its answer. It reports
// whether the question must not be shown now: answered (here or on any
// replica), the task over, or ctx done.
func (s *session) answeredMeanwhile(ctx context.Context, rec sessionmap.Task, key string) bool {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	grace := time.NewTimer(questionGrace)
	defer grace.Stop()
	for {
		if s.b.wasSent(rec.ID, key) {
			return true
		}
		if cur, err := s.b.store.GetTask(ctx, rec.Scope, rec.ID); err == nil && (answered(cur, key) || !live(cur)) {
			return true
		}
		select {
		case <-ctx.Done():
			return true
		case <-grace.C:
			return false
		case <-tick.C:
		}
	}
}

// answerStored takes a client's answer to a question this process holds no
// waiter for: false when no question of this session has the response's id
// (an answer from a foreign session is treated exactly like an unknown id).
func (b *Bridge) answerStored(r *http.Request, s *session, resp *jsonrpc.Response, body []byte) bool {
	if !resp.ID.IsValid() {
		return false
	}
	ctx := r.Context()
	q, err := b.store.GetSession(ctx, questionScope(s.id, resp.ID))
	if err != nil {
		return false
	}
	var sq storedQuestion
	if json.Unmarshal(q.InitializeParams, &sq) != nil || sq.Session != s.id || sq.Principal != s.principal || sq.Key == "" {
		return false
	}
	rec, err := b.store.GetTask(ctx, sq.Task, sq.TaskID)
	if err != nil || !live(rec) || answered(rec, sq.Key) {
		return true // nothing left to answer: the late answer is dropped
	}
	opts, _, err := s.callOptions(&reqInfo{authz: credentialOf(r), fwd: forwardOf(r)})
	if err != nil {
		b.log.Warn("face: cannot send a client's input answer upstream", "err", rpc.As(err).Message)
		return true
	}
	b.log.Info("face: took a client's input answer to a question another process asked", "task", rec.ID)
	s.takeAnswer(rec, sq.Key, sq.Request, bytes.TrimSpace(body), opts)
	return true
}

// takeAnswer translates the client's answer resp to key of rec and sends it
// upstream, exactly once per key (M-30).
func (s *session) takeAnswer(rec sessionmap.Task, key string, req modern.InputRequest, resp []byte, opts modernup.CallOptions) {
	answer, err := translate.InputResponseFromLegacy(req, resp)
	if err != nil {
		s.b.log.Warn("face: the client's answer cannot go upstream; the key stays open", "err", rpc.As(err).Message)
		s.audit(audit.ActionInput, rec.ID, rec.ToolName, "error", rpc.CodeOf(err))
		return
	}
	s.audit(audit.ActionInput, rec.ID, rec.ToolName, audit.InputAction(answer), 0)
	s.b.answer(rec, key, answer, opts)
}

// sideID is the JSON-RPC id of a side request.
func sideID(side translate.SideRequest) (jsonrpc.ID, error) {
	var idv any
	if err := json.Unmarshal(side.Request.ID, &idv); err != nil {
		return jsonrpc.ID{}, rpc.Errorf(rpc.CodeInternalError, "internal error: side request id: %v", err)
	}
	id, err := jsonrpc.MakeID(idv)
	if err != nil {
		return jsonrpc.ID{}, rpc.Errorf(rpc.CodeInternalError, "internal error: side request id: %v", err)
	}
	return id, nil
}
