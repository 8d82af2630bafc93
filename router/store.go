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
	scopes    map[sessionmap.Scope]*trackedScope
	lastSweep time.Time
}

// trackedTask is what the meter keeps of each task the process tracks,
// for as long as the task lives (10,000 parked waits on distinct tasks
// are 10,000 entries): 24 bytes, its strings kept as codes (the five
// statuses, two directions, two origins) and its scope shared with its
// session's other tasks. As strings and a time.Time it was 104 bytes.
type trackedTask struct {
	scope     *trackedScope
	expires   int64 // Unix nanoseconds; 0: unlimited ttl
	status    uint8 // statusCode
	direction uint8 // directionCode
	origin    uint8 // originCode
}

// trackedScope is a scope shared by its tracked tasks, counted so that it
// is forgotten with its last task.
type trackedScope struct {
	sc sessionmap.Scope
	n  int
}

// Codes of trackedTask: 0 is "" (a listed entry carries no direction or
// origin), the others index these lists plus one.
var (
	directions = []sessionmap.Direction{sessionmap.LegacyToModern, sessionmap.ModernToLegacy}
	origins    = []sessionmap.Origin{sessionmap.OriginUpstreamTask, sessionmap.OriginSynthesized}
)

func codeOf[T ~string](list []T, v T) uint8 {
	for i, x := range list {
		if x == v {
			return uint8(i + 1)
		}
	}
	return 0
}

func valueOf[T any](list []T, c uint8) (v T) {
	if c > 0 && int(c) <= len(list) {
		v = list[c-1]
	}
	return v
}

func (tt trackedTask) statusOf() sessionmap.Status { return valueOf(sessionmap.Statuses, tt.status) }

// scopeLocked returns the shared scope for sc, counting one more task in it.
func (s *meteredStore) scopeLocked(sc sessionmap.Scope) *trackedScope {
	ts := s.scopes[sc]
	if ts == nil {
		ts = &trackedScope{sc: sc}
		s.scopes[sc] = ts
	}
	ts.n++
	return ts
}

// forgetLocked stops tracking the task id (tt is its entry).
func (s *meteredStore) forgetLocked(id string, tt trackedTask) {
	delete(s.tracked, id)
	if tt.scope.n--; tt.scope.n == 0 {
		delete(s.scopes, tt.scope.sc)
	}
	s.m.TaskTransition(string(tt.statusOf()), "")
}

// sweepEvery bounds how often expired entries are dropped from the tracked
// set (on the next create after the interval).
const sweepEvery = 30 * time.Second

func newMeteredStore(next sessionmap.Store, m *metrics.Metrics, log *slog.Logger) *meteredStore {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &meteredStore{next: next, m: m, now: time.Now, log: log,
		tracked: map[string]trackedTask{}, scopes: map[sessionmap.Scope]*trackedScope{}}
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
		if ts := s.scopes[sc]; ts != nil {
			for id, tt := range s.tracked {
				if tt.scope == ts {
					s.forgetLocked(id, tt)
				}
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
	tt := trackedTask{status: codeOf(sessionmap.Statuses, t.Status),
		direction: codeOf(directions, t.Direction), origin: codeOf(origins, t.Origin)}
	if at, limited := t.ExpiresAt(); limited && !t.CreatedAt.IsZero() {
		tt.expires = at.UnixNano()
	}
	if ok {
		// Listed entries carry no direction or origin.
		if tt.direction == 0 {
			tt.direction = old.direction
		}
		if tt.origin == 0 {
			tt.origin = old.origin
		}
		if tt.expires == 0 {
			tt.expires = old.expires
		}
		// Statuses are monotonic in the store (terminal sticks): a stale
		// read never moves a terminal entry back.
		if old.statusOf().Terminal() {
			tt.status = old.status
		}
		// A task's scope never changes.
		tt.scope = old.scope
	} else {
		tt.scope = s.scopeLocked(t.Scope)
	}
	s.tracked[t.ID] = tt
	from := ""
	if ok {
		from = string(old.statusOf())
	}
	s.m.TaskTransition(from, string(tt.statusOf()))
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
	at := now.UnixNano()
	for id, tt := range s.tracked {
		if tt.expires != 0 && at >= tt.expires {
			s.forgetLocked(id, tt)
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
	if valueOf(origins, tt.origin) == sessionmap.OriginSynthesized {
		origin = metrics.OriginSynthesized
	}
	return string(valueOf(directions, tt.direction)), origin, true
}
