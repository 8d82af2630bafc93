package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace is the prefix of every bridge metric.
const Namespace = "tasksbridge"

// Defaults of Options.
const (
	DefaultClientWindow         = 24 * time.Hour
	DefaultMaxClients           = 50
	DefaultMaxVersionsPerClient = 5
)

// Histogram buckets, in seconds. A tasks/result wait lasts as long as the
// task, so its buckets reach an hour; upstream calls and store operations are
// short.
var (
	ResultWaitBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
	UpstreamBuckets   = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	StoreBuckets      = []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}
)

// Options configures New. The zero value gives the defaults.
type Options struct {
	// Now is the clock of the clients window (default time.Now).
	Now func() time.Time
	// ClientWindow is how long a client stays in tasksbridge_clients after
	// its last request (default 24h).
	ClientWindow time.Duration
	// MaxClients bounds the client label: the first MaxClients distinct
	// clientInfo names keep their own value, later ones are "other"
	// (default 50).
	MaxClients int
	// MaxVersionsPerClient bounds the version label per client name
	// likewise (default 5).
	MaxVersionsPerClient int
}

// Metrics owns the bridge's collectors and the registry they are registered
// on (never the global default registry, so tests and several bridges in one
// process do not collide). All methods are safe for concurrent use, and all
// are no-ops on a nil *Metrics, so a component can be built without metrics.
type Metrics struct {
	reg     *prometheus.Registry
	handler http.Handler
	clients *clientTable

	requests         *prometheus.CounterVec
	legacyCalls      *prometheus.CounterVec
	clientRequests   *prometheus.CounterVec
	sessionsActive   *prometheus.GaugeVec
	refused          *prometheus.CounterVec
	tasksActive      *prometheus.GaugeVec
	tasksCreated     *prometheus.CounterVec
	resultWait       prometheus.Histogram
	inputRequests    *prometheus.CounterVec
	upstreamRequests *prometheus.CounterVec
	upstreamDuration prometheus.Histogram
	upstreamPolls    prometheus.Counter
	outboxPending    *prometheus.GaugeVec
	outboxRetries    *prometheus.CounterVec
	storeOps         *prometheus.CounterVec
	storeDuration    prometheus.Histogram
	upstreamUp       *prometheus.GaugeVec // no labels: absent until the upstream was first tried
}

// New builds a Metrics with every collector registered once on a fresh
// registry, including the standard Go and process collectors.
func New(o Options) *Metrics {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ClientWindow <= 0 {
		o.ClientWindow = DefaultClientWindow
	}
	if o.MaxClients <= 0 {
		o.MaxClients = DefaultMaxClients
	}
	if o.MaxVersionsPerClient <= 0 {
		o.MaxVersionsPerClient = DefaultMaxVersionsPerClient
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets})
	}
	m := &Metrics{
		reg:     prometheus.NewRegistry(),
		clients: newClientTable(o),
		requests: counter("requests_total",
			"Client requests handled, by client era, upstream era, MCP method and outcome.",
			"client_era", "upstream_era", "method", "outcome"),
		legacyCalls: counter("legacy_calls_total",
			"Requests of legacy (2025-11-25) clients that use the legacy task protocol or session setup (initialize, tools/call with task, tasks/*), by method and client name.",
			"method", "client"),
		clientRequests: counter("client_requests_total",
			"Client requests by client era, clientInfo name and version (for the bridge rollout table).",
			"era", "client", "version"),
		sessionsActive: gauge("sessions_active", "Client sessions open in this process, by era.", "era"),
		refused: counter("refused_total",
			"Requests refused by a limit: a new session beyond --max-sessions (limit sessions), a call or wait beyond a per-principal limit (limit tasks, waiters).",
			"limit"),
		tasksActive: gauge("tasks_active", "Tasks this process tracks, by current status.", "status"),
		tasksCreated: counter("tasks_created_total",
			"Tasks handed to clients, by direction (client era _to_ upstream era) and origin (upstream task or synthesized from a synchronous answer).",
			"direction", "origin"),
		resultWait: histogram("task_result_wait_seconds",
			"Time a legacy tasks/result call waited for its task to end.", ResultWaitBuckets),
		inputRequests: counter("input_requests_total",
			"Input requests (elicitation, sampling, roots) relayed between a task and a client, by method and outcome.",
			"method", "outcome"),
		upstreamRequests: counter("upstream_requests_total",
			"Requests sent to the upstream server, by method and JSON-RPC code bucket.", "method", "code"),
		upstreamDuration: histogram("upstream_request_duration_seconds",
			"Duration of requests to the upstream server.", UpstreamBuckets),
		upstreamPolls: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "upstream_polls_total",
			Help: "Upstream tasks/get polls made by task watchers."}),
		outboxPending: gauge("upstream_outbox_pending",
			"Upstream side effects (tasks/cancel, tasks/update input answers) the bridge owes and is still delivering, by method.", "method"),
		outboxRetries: counter("upstream_outbox_retries_total",
			"Retries of upstream side effects (tasks/cancel, tasks/update input answers) after a failed attempt, by method.", "method"),
		storeOps: counter("store_operations_total", "Session/task store operations, by operation and outcome.", "op", "outcome"),
		storeDuration: histogram("store_operation_duration_seconds",
			"Duration of session/task store operations.", StoreBuckets),
		upstreamUp: gauge("upstream_up",
			"1 while the upstream answers (a refusal of credentials is an answer), 0 while it cannot be reached; absent until it was first tried. Not a readiness input: /readyz stays 200 while the upstream is down."),
	}
	cc := &clientsCollector{
		t: m.clients,
		clients: prometheus.NewDesc(Namespace+"_clients",
			"1 for each client (era, clientInfo name, version) seen within the window (default 24h).",
			[]string{"era", "client", "version"}, nil),
		lastSeen: prometheus.NewDesc(Namespace+"_client_last_seen_timestamp_seconds",
			"Unix time of the last request of each client seen within the window.",
			[]string{"era", "client", "version"}, nil),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.legacyCalls, m.clientRequests, m.sessionsActive, m.refused, m.tasksActive, m.tasksCreated,
		m.resultWait, m.inputRequests, m.upstreamRequests, m.upstreamDuration, m.upstreamPolls,
		m.outboxPending, m.outboxRetries, m.storeOps, m.storeDuration, m.upstreamUp, cc,
	)
	m.reg.MustRegister(newBuildInfo())
	// Known gauge series start at 0 so dashboards show a line, not a gap.
	for _, e := range []string{EraLegacy, EraModern} {
		m.sessionsActive.WithLabelValues(e)
	}
	for s := range statuses {
		m.tasksActive.WithLabelValues(s)
	}
	m.outboxPending.WithLabelValues("tasks/cancel")
	m.outboxRetries.WithLabelValues("tasks/cancel")
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return m
}

// Registry returns the registry every collector is registered on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler returns the /metrics handler (Prometheus text exposition format).
// A nil *Metrics serves 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return m.handler
}

// Request counts one client request (tasksbridge_requests_total). Eras are
// EraLegacy, EraModern or EraUnknown; method is the MCP method name; outcome
// is one of the Outcome* constants (see OutcomeOf).
func (m *Metrics) Request(clientEra, upstreamEra, method, outcome string) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(eraLabel(clientEra), eraLabel(upstreamEra), Method(method), oneOf(outcomes, outcome)).Inc()
}

// LegacyCall counts one request of a legacy client that uses the legacy task
// protocol or session setup (tasksbridge_legacy_calls_total): initialize,
// tools/call with params.task, tasks/get, tasks/result, tasks/list,
// tasks/cancel, whatever the upstream era. clientName is the session's
// clientInfo.name, bounded like ClientSeen's.
func (m *Metrics) LegacyCall(method, clientName string) {
	if m == nil {
		return
	}
	m.legacyCalls.WithLabelValues(Method(method), m.clients.client(clientName)).Inc()
}

// ClientSeen records one request of a client: it keeps the client in
// tasksbridge_clients for the window and counts the request in
// tasksbridge_client_requests_total. Call it once per client request
// (legacy: with the session's initialize clientInfo; modern: with the
// request's _meta clientInfo). name and version are bounded and sanitised.
func (m *Metrics) ClientSeen(era, name, version string) {
	if m == nil {
		return
	}
	e := eraLabel(era)
	c, v := m.clients.touch(e, name, version)
	m.clientRequests.WithLabelValues(e, c, v).Inc()
}

// Call is one client request as a face saw it, for ObserveCall.
type Call struct {
	ClientEra, UpstreamEra string
	Method                 string
	// Outcome is an Outcome* constant; when empty, OutcomeOf(Err).
	Outcome string
	Err     error
	// ClientName and ClientVersion are the clientInfo fields.
	ClientName, ClientVersion string
	// Legacy marks a legacy-protocol call (see LegacyCall).
	Legacy bool
}

// ObserveCall records a whole client request: Request, ClientSeen and, when
// c.Legacy, LegacyCall.
func (m *Metrics) ObserveCall(c Call) {
	if m == nil {
		return
	}
	outcome := c.Outcome
	if outcome == "" {
		outcome = OutcomeOf(c.Err)
	}
	m.Request(c.ClientEra, c.UpstreamEra, c.Method, outcome)
	m.ClientSeen(c.ClientEra, c.ClientName, c.ClientVersion)
	if c.Legacy {
		m.LegacyCall(c.Method, c.ClientName)
	}
}

// SessionOpened and SessionClosed move tasksbridge_sessions_active{era}.
func (m *Metrics) SessionOpened(era string) {
	if m != nil {
		m.sessionsActive.WithLabelValues(eraLabel(era)).Inc()
	}
}

// SessionClosed: see SessionOpened.
func (m *Metrics) SessionClosed(era string) {
	if m != nil {
		m.sessionsActive.WithLabelValues(eraLabel(era)).Dec()
	}
}

// Refused counts a request refused by a limit (tasksbridge_refused_total):
// limit is LimitSessions, LimitTasks or LimitWaiters; anything else is
// "other".
func (m *Metrics) Refused(limit string) {
	if m != nil {
		m.refused.WithLabelValues(oneOf(limits, limit)).Inc()
	}
}

// SetSessionsActive sets tasksbridge_sessions_active{era} (e.g. after
// rehydrating sessions at start-up).
func (m *Metrics) SetSessionsActive(era string, n int) {
	if m != nil {
		m.sessionsActive.WithLabelValues(eraLabel(era)).Set(float64(n))
	}
}

// TaskCreated counts a task handed to a client
// (tasksbridge_tasks_created_total). direction is Direction(clientEra,
// upstreamEra); origin is OriginUpstream or OriginSynthesized.
func (m *Metrics) TaskCreated(direction, origin string) {
	if m != nil {
		m.tasksCreated.WithLabelValues(oneOf(directions, direction), oneOf(origins, origin)).Inc()
	}
}

// TaskTransition moves one task between statuses in tasksbridge_tasks_active:
// from "" is a new task, to "" a task that is forgotten (expired, deleted).
// Statuses are the five task statuses; anything else is "other".
func (m *Metrics) TaskTransition(from, to string) {
	if m == nil || from == to {
		return
	}
	if from != "" {
		m.tasksActive.WithLabelValues(oneOf(statuses, from)).Dec()
	}
	if to != "" {
		m.tasksActive.WithLabelValues(oneOf(statuses, to)).Inc()
	}
}

// SetTasksActive sets tasksbridge_tasks_active{status} (e.g. from a store
// scan at start-up).
func (m *Metrics) SetTasksActive(status string, n int) {
	if m != nil {
		m.tasksActive.WithLabelValues(oneOf(statuses, status)).Set(float64(n))
	}
}

// ObserveResultWait records how long a legacy tasks/result call waited
// (tasksbridge_task_result_wait_seconds), whatever its outcome.
func (m *Metrics) ObserveResultWait(d time.Duration) {
	if m != nil {
		m.resultWait.Observe(d.Seconds())
	}
}

// InputRequest counts one input request relayed between a task and a client
// (tasksbridge_input_requests_total): method is elicitation/create,
// sampling/createMessage or roots/list; outcome an Outcome* constant.
func (m *Metrics) InputRequest(method, outcome string) {
	if m != nil {
		m.inputRequests.WithLabelValues(Method(method), oneOf(outcomes, outcome)).Inc()
	}
}

// UpstreamRequest records one request to the upstream server: its code
// bucket (CodeBucket(err)) in tasksbridge_upstream_requests_total and its
// duration in tasksbridge_upstream_request_duration_seconds.
func (m *Metrics) UpstreamRequest(method string, err error, d time.Duration) {
	if m == nil {
		return
	}
	m.upstreamRequests.WithLabelValues(Method(method), CodeBucket(err)).Inc()
	m.upstreamDuration.Observe(d.Seconds())
}

// UpstreamPoll counts one tasks/get poll of a task watcher
// (tasksbridge_upstream_polls_total); the request itself is also an
// UpstreamRequest.
func (m *Metrics) UpstreamPoll() {
	if m != nil {
		m.upstreamPolls.Inc()
	}
}

// OutboxPending moves tasksbridge_upstream_outbox_pending{method} by delta
// (+1 when the bridge starts owing the upstream a side effect, -1 when it is
// delivered or no longer matters). Its signature is outbox.Config.Pending's.
func (m *Metrics) OutboxPending(method string, delta int) {
	if m != nil {
		m.outboxPending.WithLabelValues(Method(method)).Add(float64(delta))
	}
}

// OutboxRetry counts one retry of an upstream side effect
// (tasksbridge_upstream_outbox_retries_total{method}). Its signature is
// outbox.Config.Retry's.
func (m *Metrics) OutboxRetry(method string) {
	if m != nil {
		m.outboxRetries.WithLabelValues(Method(method)).Inc()
	}
}

// StoreOp runs fn, a sessionmap operation, and records its outcome
// (StoreOutcome) and duration. op is a sessionmap method name, "create_task"
// or "CreateTask" alike; unknown names are "other". It returns fn's error
// unchanged. On a nil *Metrics it just runs fn. Its signature lets it be
// passed as a plain func(string, func() error) error hook, so sessionmap
// callers can be timed without importing Prometheus.
func (m *Metrics) StoreOp(op string, fn func() error) error {
	if m == nil {
		return fn()
	}
	start := time.Now()
	err := fn()
	m.storeDuration.Observe(time.Since(start).Seconds())
	m.storeOps.WithLabelValues(storeOp(op), StoreOutcome(err)).Inc()
	return err
}
