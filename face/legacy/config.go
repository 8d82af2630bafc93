package legacyface

import (
	"log/slog"
	"time"

	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/runtime/outbox"
	"github.com/tasksbridge/tasksbridge/runtime/upcred"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes       = 4 << 20
	DefaultSessionIdleTimeout = 24 * time.Hour
	DefaultLiveSessionTimeout = 5 * time.Minute
	DefaultKeepAlive          = 15 * time.Second
	DefaultStreamRetention    = 5 * time.Minute
	DefaultMaxTaskTTL         = 24 * time.Hour
	DefaultPollInterval       = time.Second
	DefaultListPageSize       = 50
	DefaultDiscoverTTL        = 5 * time.Minute
)

// Config configures a Bridge. Exactly one of Upstream, UpstreamCommand and
// UpstreamClient selects the modern upstream; exactly one of DataDir and Store
// the durable index.
type Config struct {
	// Upstream is the modern server's Streamable HTTP endpoint URL.
	Upstream string
	// UpstreamCommand runs a stdio upstream: a program and its arguments,
	// split like a shell would split them (quotes group words).
	UpstreamCommand string
	// UpstreamClient is a ready Client (tests, embedding). Close does not
	// close it.
	UpstreamClient *modernup.Client

	// DataDir holds the Badger store (created if needed).
	DataDir string
	// Store is an already open store (tests, embedding). Close does not
	// close it.
	Store sessionmap.Store

	// Logger receives the bridge's logs (default: slog.Default()). Task and
	// session ids are logged at debug level only (docs/ARCHITECTURE.md, No
	// secret or id in logs and labels).
	Logger *slog.Logger

	// MaxBodyBytes bounds an HTTP request body; larger ones get 413.
	MaxBodyBytes int64
	// AllowedOrigins are Origin header values accepted besides loopback
	// origins (DNS-rebinding protection: any other Origin gets 403, M-43).
	// Used when the face is served on its own; behind router the
	// request edge applies the bridge's one policy (internal/edge.Policy).
	AllowedOrigins []string
	// DisableHostCheck turns off the face's and go-sdk's loopback Host
	// check: behind a trusted reverse proxy that rewrites Host, or behind
	// router, whose request edge checks Host (with --allowed-host).
	DisableHostCheck bool

	// SessionIdleTimeout is how long a stored session survives without
	// traffic (it can be rehydrated until then). Negative: forever.
	SessionIdleTimeout time.Duration
	// LiveSessionTimeout ends the go-sdk half of an idle session (the part
	// that serves GET streams, subscriptions and the less common methods);
	// it is rebuilt from the session record on the next such request.
	// Negative: never.
	LiveSessionTimeout time.Duration
	// MaxSessions bounds the HTTP sessions this process holds; a new
	// session beyond it gets HTTP 503 with a rpc.CodeLimitReached error (default:
	// DefaultMaxSessionsPerCPU per CPU). Negative: no bound.
	MaxSessions int
	// MaxSessionsPerPrincipal bounds the sessions of the table one source
	// holds: a principal, or, without credentials, a client address (the
	// one a trusted proxy forwarded; IPv6 by /64). A new session beyond it
	// gets HTTP 429. Default: MaxSessions / DefaultSessionShareDivisor, at
	// least DefaultSessionShareFloor (at most MaxSessions). Negative: no
	// bound. When the table is full, the least recently used idle session
	// without credentials of a bigger holder makes room for a new one
	// (sessionshare.go).
	MaxSessionsPerPrincipal int
	// MaxIdleCached is how many idle HTTP sessions stay whole in memory;
	// beyond it the least recently used go dormant (a few dozen bytes each)
	// and reloaded from the store on their next request (default
	// DefaultMaxIdleCached). Negative: never.
	MaxIdleCached int
	// MaxTasksPerPrincipal bounds the tools/call requests one principal (or
	// one session without credentials) has in flight (L-73; default
	// DefaultMaxTasksPerPrincipal). Negative: no bound.
	MaxTasksPerPrincipal int
	// MaxWaitersPerPrincipal bounds the blocked waits on tasks (tasks/result,
	// plain tools/call answered by a task) of one principal (L-72; default
	// DefaultMaxWaitersPerPrincipal). Negative: no bound.
	MaxWaitersPerPrincipal int

	// Clock is the session table's clock (idle expiry; default time.Now).
	Clock func() time.Time

	// KeepAlive is the interval of SSE comment keep-alives on long
	// tools/call and tasks/result streams, so idle proxies do not cut them.
	// Negative disables them.
	KeepAlive time.Duration
	// DisableParkedWaits keeps every blocked tasks/result on its request's
	// goroutine instead of taking its HTTP/1 connection over once it
	// blocks (parked.go); for tests and diagnosis.
	DisableParkedWaits bool

	// StreamRetention is how long the events of a tools/call or
	// tasks/result event stream are kept after its last event, so a client
	// can resume it with GET and Last-Event-ID (on any replica sharing the
	// store). Negative: streams carry no event ids and cannot be resumed.
	StreamRetention time.Duration
	// Events keeps those events; nil: the store when it can (memory,
	// Redis), else this process's memory (a Badger store is one process's).
	Events sessionmap.EventStore

	// MaxTaskTTL caps the ttl of tasks the bridge synthesizes (L-74).
	MaxTaskTTL time.Duration
	// ListPageSize is the tasks/list page size.
	ListPageSize int
	// DiscoverTTL caps how long an upstream server/discover result is reused.
	DiscoverTTL time.Duration

	// Watch tunes the task watchers (poll interval bounds, backoff, push).
	// Source, Sink and Logger are set by the bridge.
	Watch watch.Config

	// StatusNotifications sends notifications/tasks/status to legacy
	// clients when a task they created changes status (L-61, optional):
	// on stdio, and on the HTTP session's standalone GET stream when one is
	// open.
	StatusNotifications bool

	// Hooks observe the bridge (metrics). Nil fields are skipped.
	Hooks Hooks

	// Audit receives the audit log (L-79, L-80): task creation, cancel,
	// input answers, result delivery and task ends. Nil: none.
	Audit audit.Sink

	// Outbox tunes the delivery of the tasks/cancel the bridge owes the
	// upstream (backoff; Pending and Retry feed metrics).
	Outbox outbox.Config

	// Credentials keeps each principal's freshest upstream credential for
	// the watchers and the outbox (creds.go); its Upstream must name this
	// face's upstream. Nil: one of this process's memory only. The face
	// neither starts nor closes it.
	Credentials *upcred.Keeper
}

// Hooks let a metrics layer observe the face without this package importing
// one. Callbacks must be fast and must not block; they carry no task or
// session ids (docs/ARCHITECTURE.md, No secret or id in logs and labels).
type Hooks struct {
	// Request is called once per legacy request the face answered.
	Request func(RequestEvent)
	// Upstream is called once per request the face sent upstream.
	Upstream func(UpstreamEvent)
	// Session is called when a legacy session starts, is rehydrated after a
	// restart, or ends.
	Session func(SessionEvent)
	// Refused is called when a limit refuses a request (a new session
	// beyond MaxSessions or beyond its source's MaxSessionsPerPrincipal,
	// both LimitSessions; a call or wait beyond a per-principal limit).
	Refused func(RefusedEvent)
}

// RefusedEvent names the limit that refused a request: LimitSessions,
// LimitTasks or LimitWaiters.
type RefusedEvent struct {
	Limit string
}

// Outcome classifies how a request ended.
type Outcome string

// Outcomes.
const (
	OutcomeOK        Outcome = "ok"
	OutcomeError     Outcome = "error"     // a JSON-RPC error answer
	OutcomeCancelled Outcome = "cancelled" // the client gave up (cancel, disconnect)
)

// RequestEvent describes one legacy request.
type RequestEvent struct {
	Method   string
	Era      string // always "legacy" for this face
	Outcome  Outcome
	Code     int64 // JSON-RPC error code when Outcome is error
	Duration time.Duration
}

// UpstreamEvent describes one upstream request.
type UpstreamEvent struct {
	Method   string
	Outcome  Outcome
	Code     int64
	Duration time.Duration
}

// SessionEvent describes a session lifecycle step: "start", "rehydrate" or
// "end".
type SessionEvent struct {
	Kind      string
	Transport string // "http" or "stdio"
	// ID is the session's Mcp-Session-Id (HTTP): in-process only, so the
	// embedder can forget what it keeps per session. Never log or label it.
	ID string
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.SessionIdleTimeout == 0 {
		c.SessionIdleTimeout = DefaultSessionIdleTimeout
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	c.normalizeLimits() // the limits' rules, shared with SetLimits (live.go)
	switch {
	case c.MaxIdleCached == 0:
		c.MaxIdleCached = DefaultMaxIdleCached
	case c.MaxIdleCached < 0:
		c.MaxIdleCached = int(^uint(0) >> 1)
	}
	if c.LiveSessionTimeout == 0 {
		c.LiveSessionTimeout = DefaultLiveSessionTimeout
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = DefaultKeepAlive
	}
	if c.StreamRetention == 0 {
		c.StreamRetention = DefaultStreamRetention
	}
	if c.MaxTaskTTL <= 0 {
		c.MaxTaskTTL = DefaultMaxTaskTTL
	}
	if c.ListPageSize <= 0 {
		c.ListPageSize = DefaultListPageSize
	}
	if c.DiscoverTTL <= 0 {
		c.DiscoverTTL = DefaultDiscoverTTL
	}
	if c.Watch.DefaultPollInterval <= 0 {
		c.Watch.DefaultPollInterval = DefaultPollInterval
	}
}
