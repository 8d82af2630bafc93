package sessionmap

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
)

// Store is what faces and watchers use. It is deliberately small so that a
// distributed backend can implement it; storetest.Run checks any
// implementation against the rules below.
//
// Every method taking a Scope only sees records that scope owns (Scope.Owns);
// anything else is ErrNotFound, the same value as for an unknown id. Expired
// records are ErrNotFound too. Methods are safe for concurrent use.
type Store interface {
	// CreateSession stores a new session durably. ErrExists if the id is taken.
	// Zero CreatedAt/LastSeenAt are set to now; ExpiresAt is derived from
	// IdleTimeoutMs.
	CreateSession(ctx context.Context, s Session) error
	// GetSession returns the session sc.Session if its principal is sc.Principal.
	GetSession(ctx context.Context, sc Scope) (Session, error)
	// TouchSession sets LastSeenAt to now (sliding the idle expiry) and, when
	// logLevel is non-nil, the session's log level. It returns the new record.
	TouchSession(ctx context.Context, sc Scope, logLevel *string) (Session, error)
	// DeleteSession removes the session record (not its tasks).
	DeleteSession(ctx context.Context, sc Scope) error

	// CreateTask stores a new task and returns only once it is durable, so that
	// a GetTask after a crash finds it (L-12, M-53; docs/ARCHITECTURE.md, No
	// handle before it is durable). ErrExists if the id is
	// taken. Zero Status is working; zero CreatedAt is now; zero LastUpdatedAt
	// is CreatedAt.
	CreateTask(ctx context.Context, t Task) error
	// GetTask returns the task id if sc owns it and it has not expired.
	GetTask(ctx context.Context, sc Scope, id string) (Task, error)
	// UpdateStatus merges a snapshot and returns the effective record:
	// terminal states never change, a pinned cancel wins, a stale non-terminal
	// snapshot is ignored. A terminal update is durable on return.
	UpdateStatus(ctx context.Context, sc Scope, id string, snap Snapshot) (Task, error)
	// PinCancel moves a non-terminal task to cancelled and pins it there, durably
	// (L-58, L-59). On a terminal task it returns the task and ErrTerminal (L-55).
	PinCancel(ctx context.Context, sc Scope, id string) (Task, error)
	// RecordAnswered atomically adds keys to the task's answered set and returns
	// the keys that were not in it yet, in the order given; the caller sends
	// only those. Durable on return. A terminal task records nothing and
	// returns no keys: there is nothing left to answer.
	RecordAnswered(ctx context.Context, sc Scope, id string, keys []string) ([]string, error)
	// OweAnswers is RecordAnswered for answers the caller delivers upstream
	// itself: in the same durable write, the payload of each fresh key is
	// kept in OwedAnswers until SettleAnswers, so a restarted bridge still
	// delivers it (PendingUpstream) and never asks its client again. It
	// returns the fresh keys, sorted. Payloads must be JSON objects.
	OweAnswers(ctx context.Context, sc Scope, id string, answers map[string]json.RawMessage) ([]string, error)
	// SettleAnswers drops the owed payloads of keys (the upstream
	// acknowledged them, or they no longer matter), on any status, durably;
	// the keys stay answered. It returns the record.
	SettleAnswers(ctx context.Context, sc Scope, id string, keys []string) (Task, error)
	// ListTasks returns up to pageSize of sc's live tasks, newest first
	// (CreatedAt descending, then id ascending), starting after cursor ("" for
	// the first page). Cursors are opaque, tamper-evident and bound to the
	// scope; a bad one is ErrInvalidCursor. pageSize <= 0 means DefaultPageSize;
	// it is capped at MaxPageSize. Listed tasks carry only what a tasks/list
	// entry needs: ID, Scope, Status, StatusMessage, CreatedAt, LastUpdatedAt,
	// TTLMs, PollIntervalMs and CancelPinned; GetTask has the rest.
	ListTasks(ctx context.Context, sc Scope, pageSize int, cursor string) (Page, error)
	// ListTasksFull is ListTasks whose tasks are whole records, as GetTask
	// returns them (payloads, upstream ids, direction): what a face needs to
	// render a page, read in one round trip to the store per page instead
	// of one GetTask per listed task. Same order, cursors and scope rule
	// as ListTasks; the cursors of both are interchangeable.
	ListTasksFull(ctx context.Context, sc Scope, pageSize int, cursor string) (Page, error)
	// SettleUpstream clears the task's UpstreamCancelPending (the upstream
	// acknowledged the cancel, or answered that the task is over there), on
	// any status, durably. It returns the record.
	SettleUpstream(ctx context.Context, sc Scope, id string) (Task, error)
	// PendingUpstream returns every unexpired task, of any scope, whose
	// UpstreamCancelPending is set or that has OwedAnswers: what a restarted
	// bridge still owes its upstreams.
	PendingUpstream(ctx context.Context) ([]Task, error)
	// DeleteSessionTasks deletes the tasks owned by exactly sc (principal and
	// session), e.g. on an HTTP DELETE of the session, and returns how many.
	DeleteSessionTasks(ctx context.Context, sc Scope) (int, error)
	// CheckEpoch compares the store's epoch with the one it had when this
	// Store was opened (epoch.go): nil while they agree; an error wrapping
	// ErrStoreLost when the store was emptied or replaced since (logged at
	// ERROR once; from then on every operation fails with ErrStoreLost until
	// the bridge is restarted); another error when the store cannot be
	// read right now. /readyz calls it.
	CheckEpoch(ctx context.Context) error

	// UpstreamEra returns the era remembered for the upstream named
	// upstream (its URL, or "command …" for a stdio upstream) and when it
	// was set; ErrNotFound when none is, or it expired. It is the bridge's
	// own record, not a session: no Scope reaches it.
	UpstreamEra(ctx context.Context, upstream string) (era.Era, time.Time, error)
	// SetUpstreamEra remembers e (era.Legacy or era.Modern) for upstream,
	// durably, replacing what was remembered; it expires after ttl, or
	// never when ttl is 0.
	SetUpstreamEra(ctx context.Context, upstream string, e era.Era, ttl time.Duration) error

	Close() error
}

// Admin is the operator's view across all scopes (read-only), used by the
// `bridge sessions|tasks` commands and by start-up recovery. Never expose it to
// clients. Records that cannot be decoded are skipped and reported in the
// returned error (wrapping ErrCorrupt) alongside the good ones.
type Admin interface {
	AllSessions(ctx context.Context) ([]Session, error)
	// AllTasks returns every unexpired task, newest first; filter fields that are
	// zero match everything.
	AllTasks(ctx context.Context, f TaskFilter) ([]Task, error)
	LookupSession(ctx context.Context, id string) (Session, error)
	LookupTask(ctx context.Context, id string) (Task, error)
}

// TaskFilter narrows Admin.AllTasks.
type TaskFilter struct {
	Session string
	Status  Status
	// UpstreamCancelPending: only tasks whose upstream cancel is still owed.
	UpstreamCancelPending bool
	// OwesUpstream: only tasks that owe their upstream a cancel or answers
	// (PendingUpstream).
	OwesUpstream bool
}

func (f TaskFilter) match(t Task) bool {
	return (f.Session == "" || t.Scope.Session == f.Session) && (f.Status == "" || t.Status == f.Status) &&
		(!f.UpstreamCancelPending || t.UpstreamCancelPending) &&
		(!f.OwesUpstream || t.UpstreamCancelPending || len(t.OwedAnswers) > 0)
}

// Page sizes for ListTasks.
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
)

// Option configures OpenBadger and NewMemory.
type Option func(*options)

type options struct {
	clock      func() time.Time
	readOnly   bool
	logger     *slog.Logger
	gcInterval time.Duration
	syncWrites bool
	gcHook     func(GCResult) // tests: observe each pass of the GC loop
	epochEvery time.Duration  // tests: how often Redis reads its epoch (0: redisEpochCheckInterval)
	memTable   int64          // tests: Badger's memtable size (0: memTableSizeFor)
}

// memTableSize is the memtable size OpenBadger opens dir with.
func (o options) memTableSize(dir string) int64 {
	if o.memTable > 0 {
		return o.memTable
	}
	return memTableSizeFor(dir)
}

func defaultOptions() options {
	return options{clock: time.Now, gcInterval: time.Minute, syncWrites: true}
}

// WithClock injects the clock used for timestamps and expiry (tests).
func WithClock(now func() time.Time) Option { return func(o *options) { o.clock = now } }

// ReadOnly opens the store read-only (OpenBadger only): several read-only
// opens may share a directory, but not with a running bridge.
func ReadOnly() Option { return func(o *options) { o.readOnly = true } }

// WithLogger receives the backend's warnings and errors (default: discarded
// below warning level, to slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithGCInterval sets how often the background loop collects expired
// records (OpenBadger only; default one minute; 0 disables the loop, callers
// then call CollectExpired themselves).
func WithGCInterval(d time.Duration) Option { return func(o *options) { o.gcInterval = d } }

// WithSyncWrites(false) makes durable operations skip fsync. Only for
// benchmarks that want to see the cost of fsync; never in the bridge.
func WithSyncWrites(on bool) Option { return func(o *options) { o.syncWrites = on } }

func withGCHook(f func(GCResult)) Option { return func(o *options) { o.gcHook = f } }

func withEpochInterval(d time.Duration) Option { return func(o *options) { o.epochEvery = d } }

// withMemTableSize opens the store with another memtable size (tests: a
// store written as older versions wrote it).
func withMemTableSize(n int64) Option { return func(o *options) { o.memTable = n } }

func buildOptions(opts []Option) options {
	o := defaultOptions()
	for _, f := range opts {
		f(&o)
	}
	if o.clock == nil {
		o.clock = time.Now
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	return o
}
