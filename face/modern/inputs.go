package modernface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
)

// A legacy upstream sends a task's input requests once, on whichever blocking
// tasks/result stream is open for it (the input side channel, L-33), and takes the
// answers by JSON-RPC id on the task's session from anyone. With several
// bridge processes behind one load balancer, the process holding that stream
// is not necessarily the one the client asks next. So every input request is
// recorded in the shared store as it arrives — an append-only log of session
// records owned by sessionmap.BridgePrincipal (no client can read them), one
// per request, numbered from 0; CreateSession refuses a taken number, so
// concurrent writers never overwrite each other — and every process reads the
// log, and the task's answered keys, before it reports or answers the task.
// Keys stay unique for the task's lifetime (M-57) and each is answered
// upstream at most once whichever process receives the answer (M-58: the
// answered set is recorded durably before an answer is sent).

// maxTaskInputs bounds the log of one task.
const maxTaskInputs = 1000

// storedInput is one logged input request.
type storedInput struct {
	Key           string          `json:"key"`
	Method        string          `json:"method"`
	Params        json.RawMessage `json:"params,omitempty"`
	LegacyID      json.RawMessage `json:"legacyId"`
	RelatedTask   string          `json:"relatedTask,omitempty"`
	ElicitationID string          `json:"elicitationId,omitempty"`
}

func (s storedInput) entry() translate.InputEntry {
	return translate.InputEntry{Key: s.Key, Request: modern.InputRequest{Method: s.Method, Params: s.Params},
		LegacyID: s.LegacyID, TaskID: s.RelatedTask, ElicitationID: s.ElicitationID}
}

func inputScope(taskID string, n int) sessionmap.Scope {
	return sessionmap.Scope{Principal: sessionmap.BridgePrincipal, Session: "task-input-" + taskID + "-" + strconv.Itoa(n)}
}

// recordInput appends e to the task's log, durably.
func (rt *taskRT) recordInput(ctx context.Context, e translate.InputEntry) error {
	body, err := json.Marshal(storedInput{Key: e.Key, Method: e.Request.Method, Params: e.Request.Params,
		LegacyID: e.LegacyID, RelatedTask: e.TaskID, ElicitationID: e.ElicitationID})
	if err != nil {
		return err
	}
	idle := 24 * time.Hour
	if rt.base.TTLMs != nil && *rt.base.TTLMs > 0 {
		idle = time.Duration(*rt.base.TTLMs) * time.Millisecond
	}
	for range maxTaskInputs {
		// Read what others logged first: the next free number follows it.
		if err := rt.syncInputs(ctx); err != nil {
			return err
		}
		rt.mu.Lock()
		n := rt.logNext
		rt.mu.Unlock()
		if n >= maxTaskInputs {
			break
		}
		sc := inputScope(rt.id, n)
		err := rt.f.store.CreateSession(ctx, sessionmap.Session{ID: sc.Session, Principal: sc.Principal, Era: era.Modern,
			InitializeParams: body, IdleTimeoutMs: idle.Milliseconds()})
		if errors.Is(err, sessionmap.ErrExists) {
			continue // another process logged one meanwhile
		}
		if err != nil {
			return err
		}
		rt.mu.Lock()
		if rt.logNext == n {
			rt.logNext = n + 1
		}
		rt.mu.Unlock()
		return nil
	}
	return fmt.Errorf("the task asked for more than %d inputs", maxTaskInputs)
}

// syncInputs merges what other processes recorded for the task: input
// requests they received, keys answered through them.
func (rt *taskRT) syncInputs(ctx context.Context) error {
	store := rt.f.store
	rec, err := store.GetTask(ctx, rt.scope, rt.id)
	if err != nil && !errors.Is(err, sessionmap.ErrNotFound) {
		return err
	}
	var logged []storedInput
	rt.mu.Lock()
	n := rt.logNext
	rt.mu.Unlock()
	for ; n < maxTaskInputs; n++ {
		s, err := store.GetSession(ctx, inputScope(rt.id, n))
		if errors.Is(err, sessionmap.ErrNotFound) {
			break
		}
		if err != nil {
			return err
		}
		var in storedInput
		if json.Unmarshal(s.InitializeParams, &in) != nil || in.Key == "" {
			continue // unreadable: skipped, never presented
		}
		logged = append(logged, in)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	changed := false
	for _, k := range rec.AnsweredKeys {
		if !rt.answered[k] {
			rt.answered[k] = true
			changed = true
		}
		if _, ok := rt.pending[k]; ok {
			delete(rt.pending, k)
			changed = true
		}
	}
	if n > rt.logNext {
		rt.logNext = n
	}
	if rt.failure == nil && !rec.Status.Terminal() {
		for _, in := range logged {
			if rt.addPendingLocked(in.entry()) {
				changed = true
			}
		}
	}
	if changed {
		rt.notifyLocked()
	}
	return nil
}

// addPendingLocked makes e outstanding unless it is known or answered, and
// reports whether it did.
func (rt *taskRT) addPendingLocked(e translate.InputEntry) bool {
	if _, ok := rt.pending[e.Key]; ok || rt.answered[e.Key] {
		return false
	}
	rt.pending[e.Key] = e
	rt.order = append(rt.order, e.Key)
	return true
}
