package router

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// meteredStore is a sessionmap.Store that times every operation
// (tasksbridge_store_operations_total, _duration_seconds) and follows the
// status of every task it sees (tasksbridge_tasks_active): tasks created, and
// tasks read back after a restart ("rehydrated"), until they expire or their
// session's tasks are deleted. Both faces share one, so the figures cover
// every task the process tracks whatever its direction.
//
// It also remembers each tracked task's direction and origin, so that the
// wire observer can label a task it sees handed to a client
// (tasksbridge_tasks_created_total) without reading the store again.
//
// And it is where a failure of the store itself (Redis down, a disk error)
// stops short of the client: every face formats store errors into its
// -32603 messages, and those words name infrastructure (the Redis address)
// a client must not see. Such an error is logged here at WARN with its
// detail (which never holds a password: sessionmap names addresses only)
// and handed on as errStoreUnavailable, whose text is what a client can act
// on; errors.Is still sees the original.
type meteredStore struct {
	next sessionmap.Store
	m    *metrics.Metrics
	now  func() time.Time
	log  *slog.Logger

	warnMu     sync.Mutex
	lastWarn   time.Time
	suppressed int

	mu        sync.Mutex
	tracked   map[string]trackedTask // by local task id (never a label)
	lastSweep time.Time
}

type trackedTask struct {
	status    sessionmap.Status
	direction sessionmap.Direction
	origin    sessionmap.Origin
	scope     sessionmap.Scope
	expires   time.Time // zero: unlimited ttl
}

// sweepEvery bounds how often expired entries are dropped from the tracked
// set (on the next create after the interval).
const sweepEvery = 30 * time.Second

func newMeteredStore(next sessionmap.Store, m *metrics.Metrics, log *slog.Logger) *meteredStore {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &meteredStore{next: next, m: m, now: time.Now, log: log, tracked: map[string]trackedTask{}}
}

var _ sessionmap.Store = (*meteredStore)(nil)

// storeWarnEvery bounds the WARN lines of an outage: every operation fails
// then, and one line per interval (with the count left out) says enough.
const storeWarnEvery = 10 * time.Second

// storeUnavailable is a store failure as clients see it.
type storeUnavailable struct{ err error }

func (e storeUnavailable) Error() string { return "the bridge's task store is unavailable; try again" }
func (e storeUnavailable) Unwrap() error { return e.err }

// op runs one store operation under the metrics hook; a failure of the
// store itself is logged and hidden (see meteredStore).
func (s *meteredStore) op(name string, fn func() error) error {
	err := s.m.StoreOp(name, fn)
	if err == nil || metrics.StoreOutcome(err) != metrics.StoreError {
		return err // not found, exists, terminal, invalid argument or cursor, cancelled: the request's own outcome
	}
	if errors.Is(err, sessionmap.ErrStoreLost) {
		return err // its text is for clients ("the bridge lost its task store"); the store logged the detail at ERROR
	}
	s.warnMu.Lock()
	if now := s.now(); now.Sub(s.lastWarn) >= storeWarnEvery {
		s.log.Warn("task store operation failed; clients are told the store is unavailable",
			"op", name, "err", err, "failures_not_logged", s.suppressed)
		s.lastWarn, s.suppressed = now, 0
	} else {
		s.suppressed++
	}
	s.warnMu.Unlock()
	return storeUnavailable{err}
}

func (s *meteredStore) CreateSession(ctx context.Context, sess sessionmap.Session) error {
	return s.op("create_session", func() error { return s.next.CreateSession(ctx, sess) })
}

func (s *meteredStore) GetSession(ctx context.Context, sc sessionmap.Scope) (out sessionmap.Session, err error) {
	err = s.op("get_session", func() error { out, err = s.next.GetSession(ctx, sc); return err })
	return out, err
}

func (s *meteredStore) TouchSession(ctx context.Context, sc sessionmap.Scope, logLevel *string) (out sessionmap.Session, err error) {
	err = s.op("touch_session", func() error { out, err = s.next.TouchSession(ctx, sc, logLevel); return err })
	return out, err
}

func (s *meteredStore) DeleteSession(ctx context.Context, sc sessionmap.Scope) error {
	return s.op("delete_session", func() error { return s.next.DeleteSession(ctx, sc) })
}

func (s *meteredStore) CreateTask(ctx context.Context, t sessionmap.Task) error {
	err := s.op("create_task", func() error { return s.next.CreateTask(ctx, t) })
	if err == nil {
		if t.Status == "" {
			t.Status = sessionmap.StatusWorking
		}
		if t.CreatedAt.IsZero() {
			t.CreatedAt = s.now()
		}
		s.observe(t)
		s.maybeSweep()
	}
	return err
}

func (s *meteredStore) GetTask(ctx context.Context, sc sessionmap.Scope, id string) (out sessionmap.Task, err error) {
	err = s.op("get_task", func() error { out, err = s.next.GetTask(ctx, sc, id); return err })
	if err == nil {
		s.observe(out)
	}
	return out, err
}

func (s *meteredStore) UpdateStatus(ctx context.Context, sc sessionmap.Scope, id string, snap sessionmap.Snapshot) (out sessionmap.Task, err error) {
	err = s.op("update_status", func() error { out, err = s.next.UpdateStatus(ctx, sc, id, snap); return err })
	if err == nil {
		s.observe(out)
	}
	return out, err
}

func (s *meteredStore) PinCancel(ctx context.Context, sc sessionmap.Scope, id string) (out sessionmap.Task, err error) {
	err = s.op("pin_cancel", func() error { out, err = s.next.PinCancel(ctx, sc, id); return err })
	if err == nil || (errors.Is(err, sessionmap.ErrTerminal) && out.ID != "") {
		s.observe(out)
	}
	return out, err
}

func (s *meteredStore) RecordAnswered(ctx context.Context, sc sessionmap.Scope, id string, keys []string) (out []string, err error) {
	err = s.op("record_answered", func() error { out, err = s.next.RecordAnswered(ctx, sc, id, keys); return err })
	return out, err
}

func (s *meteredStore) OweAnswers(ctx context.Context, sc sessionmap.Scope, id string, answers map[string]json.RawMessage) (out []string, err error) {
	err = s.op("owe_answers", func() error { out, err = s.next.OweAnswers(ctx, sc, id, answers); return err })
	return out, err
}

func (s *meteredStore) SettleAnswers(ctx context.Context, sc sessionmap.Scope, id string, keys []string) (out sessionmap.Task, err error) {
	err = s.op("settle_answers", func() error { out, err = s.next.SettleAnswers(ctx, sc, id, keys); return err })
	return out, err
}

func (s *meteredStore) SettleUpstream(ctx context.Context, sc sessionmap.Scope, id string) (out sessionmap.Task, err error) {
	err = s.op("settle_upstream", func() error { out, err = s.next.SettleUpstream(ctx, sc, id); return err })
	return out, err
}

func (s *meteredStore) PendingUpstream(ctx context.Context) (out []sessionmap.Task, err error) {
	err = s.op("pending_upstream", func() error { out, err = s.next.PendingUpstream(ctx); return err })
	return out, err
}

func (s *meteredStore) ListTasks(ctx context.Context, sc sessionmap.Scope, pageSize int, cursor string) (out sessionmap.Page, err error) {
	err = s.op("list_tasks", func() error { out, err = s.next.ListTasks(ctx, sc, pageSize, cursor); return err })
	if err == nil {
		for _, t := range out.Tasks {
			s.observe(t)
		}
	}
	return out, err
}

func (s *meteredStore) DeleteSessionTasks(ctx context.Context, sc sessionmap.Scope) (n int, err error) {
	err = s.op("delete_session_tasks", func() error { n, err = s.next.DeleteSessionTasks(ctx, sc); return err })
	if err == nil {
		s.mu.Lock()
		for id, tt := range s.tracked {
			if tt.scope == sc {
				delete(s.tracked, id)
				s.m.TaskTransition(string(tt.status), "")
			}
		}
		s.mu.Unlock()
	}
	return n, err
}

// Close reports its error unchanged: only the operator sees it.
func (s *meteredStore) Close() error {
	return s.m.StoreOp("close", s.next.Close)
}

// observe moves the task's tasks_active series to its current status,
// starting to track it when it is new to this process.
func (s *meteredStore) observe(t sessionmap.Task) {
	if t.ID == "" || !t.Status.Valid() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.tracked[t.ID]
	tt := trackedTask{status: t.Status, direction: t.Direction, origin: t.Origin, scope: t.Scope}
	if at, limited := t.ExpiresAt(); limited && !t.CreatedAt.IsZero() {
		tt.expires = at
	}
	if ok {
		// Listed entries carry no direction or origin.
		if tt.direction == "" {
			tt.direction = old.direction
		}
		if tt.origin == "" {
			tt.origin = old.origin
		}
		if tt.expires.IsZero() {
			tt.expires = old.expires
		}
		// Statuses are monotonic in the store (terminal sticks): a stale
		// read never moves a terminal entry back.
		if old.status.Terminal() {
			tt.status = old.status
		}
	}
	s.tracked[t.ID] = tt
	from := ""
	if ok {
		from = string(old.status)
	}
	s.m.TaskTransition(from, string(tt.status))
}

// maybeSweep forgets expired tasks, at most once per sweepEvery.
func (s *meteredStore) maybeSweep() {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastSweep) < sweepEvery {
		return
	}
	s.lastSweep = now
	for id, tt := range s.tracked {
		if !tt.expires.IsZero() && !now.Before(tt.expires) {
			delete(s.tracked, id)
			s.m.TaskTransition(string(tt.status), "")
		}
	}
}

// origin returns the labels of a tracked task handed to a client: its
// direction and origin as metric label values.
func (s *meteredStore) origin(id string) (direction, origin string, ok bool) {
	s.mu.Lock()
	tt, ok := s.tracked[id]
	s.mu.Unlock()
	if !ok {
		return "", "", false
	}
	origin = metrics.OriginUpstream
	if tt.origin == sessionmap.OriginSynthesized {
		origin = metrics.OriginSynthesized
	}
	return string(tt.direction), origin, true
}
