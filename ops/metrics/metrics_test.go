package metrics

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// fakeClock is the injectable clock of the clients window.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_780_000_000, 0).UTC()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// upstreamDown mimics upstream/modern.Error for an unreachable upstream: it
// is Temporary and unwraps to a -32603 *rpc.Error.
type upstreamDown struct{ rpc *rpc.Error }

func (e *upstreamDown) Error() string   { return e.rpc.Message }
func (e *upstreamDown) Unwrap() error   { return e.rpc }
func (e *upstreamDown) Temporary() bool { return true }

func errDown() error {
	return &upstreamDown{rpc.Errorf(rpc.CodeInternalError, "upstream http://127.0.0.1:1/mcp unreachable (tasks/get)")}
}

// script drives the calls two faces would make for a legacy client (task
// with tasks/result) and a modern client, and returns the clock.
func script(t *testing.T) (*Metrics, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	m := New(Options{Now: clock.Now})

	legacyCall := func(method string, err error) {
		m.ObserveCall(Call{ClientEra: EraLegacy, UpstreamEra: EraModern, Method: method, Err: err,
			ClientName: "claude-code", ClientVersion: "1.2.0", Legacy: true})
	}
	m.SessionOpened(EraLegacy)
	m.Refused(LimitSessions)
	legacyCall("initialize", nil)
	legacyCall("tools/call", nil) // with params.task
	m.TaskCreated(Direction(EraLegacy, EraModern), OriginUpstream)
	m.TaskTransition("", "working")
	clock.Advance(time.Minute)
	legacyCall("tasks/result", nil)
	m.ObserveResultWait(1500 * time.Millisecond)
	m.TaskTransition("working", "completed")
	legacyCall("tasks/get", rpc.Errorf(rpc.CodeInvalidParams, "unknown task"))
	// A plain tools/list of the legacy client: counted, but not a legacy call.
	m.ObserveCall(Call{ClientEra: EraLegacy, UpstreamEra: EraModern, Method: "tools/list",
		ClientName: "claude-code", ClientVersion: "1.2.0"})

	clock.Advance(time.Minute)
	modernCall := func(method string, err error) {
		m.ObserveCall(Call{ClientEra: EraModern, UpstreamEra: EraModern, Method: method, Err: err,
			ClientName: "inspector", ClientVersion: "0.9"})
	}
	modernCall("tools/call", nil)
	m.TaskCreated(Direction(EraModern, EraModern), OriginUpstream)
	modernCall("tasks/result", rpc.Errorf(rpc.CodeMethodNotFound, "tasks/result does not exist"))
	m.TaskCreated(Direction(EraLegacy, EraModern), OriginSynthesized)
	m.InputRequest("elicitation/create", OutcomeOK)
	m.InputRequest("sampling/createMessage", OutcomeOf(context.Canceled))

	m.UpstreamRequest("tools/call", nil, 3*time.Millisecond)
	m.UpstreamRequest("tasks/get", errDown(), 10*time.Millisecond)
	m.UpstreamRequest("tasks/get", rpc.Errorf(rpc.CodeInvalidParams, "no such task"), time.Millisecond)
	m.UpstreamPoll()
	m.UpstreamPoll()
	m.UpstreamUp(true)

	if err := m.StoreOp("CreateTask", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := m.StoreOp("get_task", func() error { return sessionmap.ErrNotFound }); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Fatalf("StoreOp changed the error: %v", err)
	}
	return m, clock
}

// TestScriptedCountersExact pins the exact series and values after a
// scripted sequence: the metric names and labels are a contract (docs/METRICS.md).
func TestScriptedCountersExact(t *testing.T) {
	m, clock := script(t)
	lastLegacy := float64(clock.Now().Add(-time.Minute).Unix())
	lastModern := float64(clock.Now().Unix())
	expected := fmt.Sprintf(`
# HELP tasksbridge_requests_total Client requests handled, by client era, upstream era, MCP method and outcome.
# TYPE tasksbridge_requests_total counter
tasksbridge_requests_total{client_era="legacy",method="initialize",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tools/call",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tasks/result",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tasks/get",outcome="invalid_params",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tools/list",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="modern",method="tools/call",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="modern",method="tasks/result",outcome="method_not_found",upstream_era="modern"} 1
# HELP tasksbridge_legacy_calls_total Requests of legacy (2025-11-25) clients that use the legacy task protocol or session setup (initialize, tools/call with task, tasks/*), by method and client name.
# TYPE tasksbridge_legacy_calls_total counter
tasksbridge_legacy_calls_total{client="claude-code",method="initialize"} 1
tasksbridge_legacy_calls_total{client="claude-code",method="tools/call"} 1
tasksbridge_legacy_calls_total{client="claude-code",method="tasks/result"} 1
tasksbridge_legacy_calls_total{client="claude-code",method="tasks/get"} 1
# HELP tasksbridge_client_requests_total Client requests by client era, clientInfo name and version (for the bridge rollout table).
# TYPE tasksbridge_client_requests_total counter
tasksbridge_client_requests_total{client="claude-code",era="legacy",version="1.2.0"} 5
tasksbridge_client_requests_total{client="inspector",era="modern",version="0.9"} 2
# HELP tasksbridge_clients 1 for each client (era, clientInfo name, version) seen within the window (default 24h).
# TYPE tasksbridge_clients gauge
tasksbridge_clients{client="claude-code",era="legacy",version="1.2.0"} 1
tasksbridge_clients{client="inspector",era="modern",version="0.9"} 1
# HELP tasksbridge_client_last_seen_timestamp_seconds Unix time of the last request of each client seen within the window.
# TYPE tasksbridge_client_last_seen_timestamp_seconds gauge
tasksbridge_client_last_seen_timestamp_seconds{client="claude-code",era="legacy",version="1.2.0"} %g
tasksbridge_client_last_seen_timestamp_seconds{client="inspector",era="modern",version="0.9"} %g
# HELP tasksbridge_sessions_active Client sessions open in this process, by era.
# TYPE tasksbridge_sessions_active gauge
tasksbridge_sessions_active{era="legacy"} 1
tasksbridge_sessions_active{era="modern"} 0
# HELP tasksbridge_tasks_active Tasks this process tracks, by current status.
# TYPE tasksbridge_tasks_active gauge
tasksbridge_tasks_active{status="cancelled"} 0
tasksbridge_tasks_active{status="completed"} 1
tasksbridge_tasks_active{status="failed"} 0
tasksbridge_tasks_active{status="input_required"} 0
tasksbridge_tasks_active{status="working"} 0
# HELP tasksbridge_tasks_created_total Tasks handed to clients, by direction (client era _to_ upstream era) and origin (upstream task or synthesized from a synchronous answer).
# TYPE tasksbridge_tasks_created_total counter
tasksbridge_tasks_created_total{direction="legacy_to_modern",origin="upstream"} 1
tasksbridge_tasks_created_total{direction="legacy_to_modern",origin="synthesized"} 1
tasksbridge_tasks_created_total{direction="modern_to_modern",origin="upstream"} 1
# HELP tasksbridge_input_requests_total Input requests (elicitation, sampling, roots) relayed between a task and a client, by method and outcome.
# TYPE tasksbridge_input_requests_total counter
tasksbridge_input_requests_total{method="elicitation/create",outcome="ok"} 1
tasksbridge_input_requests_total{method="sampling/createMessage",outcome="cancelled"} 1
# HELP tasksbridge_upstream_requests_total Requests sent to the upstream server, by method and JSON-RPC code bucket.
# TYPE tasksbridge_upstream_requests_total counter
tasksbridge_upstream_requests_total{code="ok",method="tools/call"} 1
tasksbridge_upstream_requests_total{code="transport",method="tasks/get"} 1
tasksbridge_upstream_requests_total{code="-32602",method="tasks/get"} 1
# HELP tasksbridge_upstream_polls_total Upstream tasks/get polls made by task watchers.
# TYPE tasksbridge_upstream_polls_total counter
tasksbridge_upstream_polls_total 2
# HELP tasksbridge_store_operations_total Session/task store operations, by operation and outcome.
# TYPE tasksbridge_store_operations_total counter
tasksbridge_store_operations_total{op="create_task",outcome="ok"} 1
tasksbridge_store_operations_total{op="get_task",outcome="not_found"} 1
`, lastLegacy, lastModern)
	names := []string{"tasksbridge_requests_total", "tasksbridge_legacy_calls_total", "tasksbridge_client_requests_total",
		"tasksbridge_clients", "tasksbridge_client_last_seen_timestamp_seconds", "tasksbridge_sessions_active",
		"tasksbridge_tasks_active", "tasksbridge_tasks_created_total", "tasksbridge_input_requests_total",
		"tasksbridge_upstream_requests_total", "tasksbridge_upstream_polls_total", "tasksbridge_store_operations_total"}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(expected), names...); err != nil {
		t.Fatal(err)
	}

	for name, want := range map[string]struct {
		count uint64
		sum   float64
	}{
		"tasksbridge_task_result_wait_seconds":          {1, 1.5},
		"tasksbridge_upstream_request_duration_seconds": {3, 0.014},
		"tasksbridge_store_operation_duration_seconds":  {2, -1}, // real durations: sum not pinned
	} {
		h := histogram(t, m.Registry(), name)
		if h.GetSampleCount() != want.count {
			t.Errorf("%s: count %d, want %d", name, h.GetSampleCount(), want.count)
		}
		if want.sum >= 0 && (h.GetSampleSum() < want.sum-1e-9 || h.GetSampleSum() > want.sum+1e-9) {
			t.Errorf("%s: sum %g, want %g", name, h.GetSampleSum(), want.sum)
		}
	}
}

func histogram(t *testing.T, g prometheus.Gatherer, name string) *dto.Histogram {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			if len(mf.Metric) != 1 || mf.Metric[0].Histogram == nil {
				t.Fatalf("%s: want one unlabelled histogram, got %v", name, mf)
			}
			return mf.Metric[0].Histogram
		}
	}
	t.Fatalf("%s not registered", name)
	return nil
}

// labelValues returns the distinct values of label over every series of
// every tasksbridge_ family that has it.
func labelValues(t *testing.T, g prometheus.Gatherer, label string) map[string]map[string]bool {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, mf := range mfs {
		for _, mt := range mf.Metric {
			for _, lp := range mt.Label {
				if lp.GetName() == label {
					if out[mf.GetName()] == nil {
						out[mf.GetName()] = map[string]bool{}
					}
					out[mf.GetName()][lp.GetValue()] = true
				}
			}
		}
	}
	return out
}

// TestClientCardinalityBound: 1,000 distinct client names give at most 51
// client label values (50 by first sight + "other") in every family, and each
// kept client at most MaxVersionsPerClient+1 versions (docs/ARCHITECTURE.md,
// No secret or id in logs and labels).
func TestClientCardinalityBound(t *testing.T) {
	m := New(Options{})
	for i := range 1000 {
		name := fmt.Sprintf("client-%d", i)
		for v := range 10 {
			m.ObserveCall(Call{ClientEra: EraLegacy, UpstreamEra: EraModern, Method: "initialize",
				ClientName: name, ClientVersion: fmt.Sprintf("1.%d.0", v), Legacy: true})
		}
	}
	vals := labelValues(t, m.Registry(), "client")
	for _, fam := range []string{"tasksbridge_legacy_calls_total", "tasksbridge_client_requests_total", "tasksbridge_clients"} {
		got := vals[fam]
		if len(got) != DefaultMaxClients+1 || !got[Other] || !got["client-0"] || !got["client-49"] || got["client-50"] {
			t.Errorf("%s: %d client values (want %d: client-0..client-49 and other): %v", fam, len(got), DefaultMaxClients+1, got)
		}
	}
	versions := labelValues(t, m.Registry(), "version")["tasksbridge_clients"]
	// 5 kept versions of client-0 are 1.0.0..1.4.0; everything else is other.
	if len(versions) != DefaultMaxVersionsPerClient+1 || !versions["1.4.0"] || versions["1.5.0"] || !versions[Other] {
		t.Errorf("version values %v", versions)
	}
	if n := testutil.CollectAndCount(m.Registry(), "tasksbridge_clients"); n > (DefaultMaxClients*(DefaultMaxVersionsPerClient+1) + 1) {
		t.Errorf("tasksbridge_clients has %d series", n)
	}
	if got := testutil.ToFloat64(m.clientRequests.WithLabelValues(EraLegacy, Other, Other)); got != 950*10 {
		t.Errorf("other/other requests = %g, want 9500", got)
	}

	// Configurable bound.
	small := New(Options{MaxClients: 3, MaxVersionsPerClient: 1})
	for i := range 20 {
		small.ClientSeen(EraModern, fmt.Sprintf("c%d", i), fmt.Sprintf("v%d", i%2))
	}
	if got := labelValues(t, small.Registry(), "client")["tasksbridge_clients"]; len(got) != 4 {
		t.Errorf("MaxClients 3: client values %v", got)
	}
}

// Realistic values of what must never appear in a label: a sessionmap task
// id (base64url, 18 bytes), a go-sdk session id (rand.Text), a UUID, and
// Authorization header values.
var injected = []string{
	"q3Xw9kLmT2vB8nYpR4sJd1Fh",             // sessionmap.NewTaskID shape
	"QK4TZ7M2WJ3XN5R6B2L7P4YVHA",           // rand.Text shape
	"7d9f3c2a-4b1e-4c8d-9a6f-2e5b8c1d0f3a", // UUID
	"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.S3cr3tS1gn4tur3xyz",
	"Basic YWxpY2U6czNjcjN0",
	"sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
}

// TestNoIDsOrSecretsInLabels passes ids and secrets wherever a buggy face or
// a hostile client could put them, and checks no label value equals (or
// contains) one (docs/ARCHITECTURE.md, No secret or id in logs and labels).
func TestNoIDsOrSecretsInLabels(t *testing.T) {
	m, _ := script(t)
	// A fresh task id goes wherever an id could be passed by mistake; the
	// free-text clientInfo fields get the fixed realistic samples (their
	// heuristic's rate on random ids is TestLooksSecretDetectionRates').
	fresh := sessionmap.NewTaskID()
	injected := append([]string{fresh}, injected...)
	for i, s := range injected {
		if i > 0 {
			m.ObserveCall(Call{ClientEra: s, UpstreamEra: s, Method: s, Outcome: s, ClientName: s, ClientVersion: s, Legacy: true})
			m.ObserveCall(Call{ClientEra: EraLegacy, UpstreamEra: EraModern, Method: "tasks/get", ClientName: "claude-code", ClientVersion: s})
			m.ObserveCall(Call{ClientEra: EraModern, UpstreamEra: EraModern, Method: "tasks/get", ClientName: "my client " + s, ClientVersion: "1.0 " + s})
			m.LegacyCall(s, s)
			m.ClientSeen(s, s, s)
		}
		m.ObserveCall(Call{ClientEra: s, UpstreamEra: s, Method: s, Outcome: s, ClientName: "claude-code", ClientVersion: "1.2.0"})
		m.LegacyCall(s, "claude-code")
		m.ClientSeen(s, "claude-code", "1.2.0")
		m.Request(s, s, s, s)
		m.SessionOpened(s)
		m.SetSessionsActive(s, 1)
		m.TaskCreated(s, s)
		m.TaskTransition(s, s+"x")
		m.SetTasksActive(s, 2)
		m.InputRequest(s, s)
		m.UpstreamRequest(s, errors.New(s), time.Millisecond)
		m.UpstreamRequest(s, rpc.Errorf(-31999, "%s", s), time.Millisecond)
		_ = m.StoreOp(s, func() error { return errors.New(s) })
	}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, mf := range mfs {
		for _, mt := range mf.Metric {
			for _, lp := range mt.Label {
				series++
				for _, s := range injected {
					for _, part := range strings.Fields(s) {
						if len(part) >= 8 && strings.Contains(lp.GetValue(), part) {
							t.Errorf("%s{%s=%q} carries injected %q", mf.GetName(), lp.GetName(), lp.GetValue(), s)
						}
					}
				}
			}
		}
	}
	if series == 0 {
		t.Fatal("no labelled series gathered")
	}
}

// TestClientsWindowExpiry: a client stays in tasksbridge_clients for the
// window after its last request, then disappears; a later request brings it
// back.
func TestClientsWindowExpiry(t *testing.T) {
	clock := newFakeClock()
	m := New(Options{Now: clock.Now, ClientWindow: 24 * time.Hour})
	count := func() int { return testutil.CollectAndCount(m.Registry(), "tasksbridge_clients") }
	seen := func() map[string]bool { return labelValues(t, m.Registry(), "client")["tasksbridge_clients"] }

	m.ClientSeen(EraLegacy, "old-client", "1")
	clock.Advance(23 * time.Hour)
	m.ClientSeen(EraModern, "new-client", "2")
	if n := count(); n != 2 {
		t.Fatalf("after 23h: %d clients, want 2", n)
	}
	clock.Advance(time.Hour) // old-client exactly 24h ago: still within the window
	if n := count(); n != 2 {
		t.Fatalf("at 24h: %d clients, want 2", n)
	}
	clock.Advance(time.Second)
	if got := seen(); len(got) != 1 || !got["new-client"] {
		t.Fatalf("after 24h+1s: %v, want only new-client", got)
	}
	if n := testutil.CollectAndCount(m.Registry(), "tasksbridge_client_last_seen_timestamp_seconds"); n != 1 {
		t.Fatalf("last-seen series %d, want 1", n)
	}
	// Counters are not windowed.
	if got := testutil.ToFloat64(m.clientRequests.WithLabelValues(EraLegacy, "old-client", "1")); got != 1 {
		t.Fatalf("old-client requests %g", got)
	}
	m.ClientSeen(EraLegacy, "old-client", "1")
	clock.Advance(24 * time.Hour)
	if got := seen(); len(got) != 1 || !got["old-client"] {
		t.Fatalf("after renewal: %v, want only old-client", got)
	}
	clock.Advance(time.Nanosecond)
	if n := count(); n != 0 {
		t.Fatalf("all expired: %d clients", n)
	}
}

func TestOutcomeOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, OutcomeOK},
		{context.Canceled, OutcomeCancelled},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), OutcomeTimeout},
		{errDown(), OutcomeUpstreamUnavailable},
		{rpc.Errorf(rpc.CodeParseError, "x"), OutcomeParseError},
		{rpc.Errorf(rpc.CodeInvalidRequest, "x"), OutcomeInvalidRequest},
		{rpc.Errorf(rpc.CodeMethodNotFound, "x"), OutcomeMethodNotFound},
		{fmt.Errorf("face: %w", rpc.Errorf(rpc.CodeInvalidParams, "x")), OutcomeInvalidParams},
		{rpc.Errorf(rpc.CodeInternalError, "x"), OutcomeInternal},
		{errors.New("plain"), OutcomeInternal},
		{rpc.Errorf(rpc.CodeLegacyResourceNotFound, "x"), OutcomeResourceNotFound},
		{rpc.Errorf(rpc.CodeHeaderMismatch, "x"), OutcomeHeaderMismatch},
		{rpc.Errorf(rpc.CodeMissingRequiredClientCapability, "x"), OutcomeMissingCapability},
		{rpc.Errorf(rpc.CodeUnsupportedProtocolVersion, "x"), OutcomeUnsupportedVersion},
		{rpc.Errorf(-32050, "x"), OutcomeError},
	} {
		if got := OutcomeOf(c.err); got != c.want {
			t.Errorf("OutcomeOf(%v) = %q, want %q", c.err, got, c.want)
		}
		if !outcomes[OutcomeOf(c.err)] {
			t.Errorf("OutcomeOf(%v) outside the outcome set", c.err)
		}
	}
}

func TestCodeBucket(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, CodeOK},
		{context.Canceled, CodeCancelled},
		{context.DeadlineExceeded, CodeTimeout},
		{errDown(), CodeTransport},
		{errors.New("dial tcp: connection refused"), CodeTransport},
		{rpc.Errorf(rpc.CodeInvalidParams, "x"), "-32602"},
		{rpc.Errorf(rpc.CodeMissingRequiredClientCapability, "x"), "-32021"},
		{rpc.Errorf(-32042, "x"), CodeServerError},
		{rpc.Errorf(1234, "x"), Other},
		// An upstream that answers 401/403 is reachable: its refusal is
		// named, never counted as a transport failure (even wrapped in an
		// adapter error that also carries a -32603).
		{&oauthmeta.UpstreamAuthError{Status: 401}, CodeUnauthorized},
		{fmt.Errorf("up: %w", errors.Join(rpc.Errorf(rpc.CodeInternalError, "x"), &oauthmeta.UpstreamAuthError{Status: 403})), CodeForbidden},
		{fmt.Errorf("Post: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), CodeTLS},
		{x509.HostnameError{Host: "x"}, CodeTLS},
	} {
		if got := CodeBucket(c.err); got != c.want {
			t.Errorf("CodeBucket(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if len(Codes()) != 8+len(knownCodes) {
		t.Errorf("Codes() = %v", Codes())
	}
}

func TestLabelNormalisers(t *testing.T) {
	for in, want := range map[string]string{
		"CreateTask": "create_task", "create_task": "create_task", "pinCancel": "pin_cancel",
		"RecordAnswered": "record_answered", "Frobnicate": Other, "": Other, strings.Repeat("A", 100): Other,
	} {
		if got := storeOp(in); got != want {
			t.Errorf("storeOp(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"tasks/result": "tasks/result", "tools/call": "tools/call", "server/discover": "server/discover",
		"tasks/Result": Other, "x-vendor/thing": Other, "": Other,
	} {
		if got := Method(in); got != want {
			t.Errorf("Method(%q) = %q, want %q", in, got, want)
		}
	}
	if d := Direction(EraModern, EraLegacy); d != DirectionModernToLegacy {
		t.Errorf("Direction = %q", d)
	}
	if d := Direction("2025-11-25", EraLegacy); d != Other {
		t.Errorf("Direction with an unknown era = %q, want other", d)
	}
	for in, want := range map[error]string{
		sessionmap.ErrExists: StoreExists, sessionmap.ErrTerminal: StoreTerminal,
		sessionmap.ErrInvalidCursor: StoreInvalidCursor, sessionmap.ErrInvalidArgument: StoreInvalidArgument,
		sessionmap.ErrCorrupt: StoreError, context.DeadlineExceeded: StoreCancelled,
	} {
		if got := StoreOutcome(fmt.Errorf("wrapped: %w", in)); got != want {
			t.Errorf("StoreOutcome(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"  claude-code ": "claude-code", "": Unknown, "naïve\nclient\"}": "na_ve_client__",
		strings.Repeat("x", 200): strings.Repeat("x", maxNameLen),
	} {
		if got := sanitize(in, maxNameLen); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLooksSecret pins the heuristic on realistic client names (kept) and
// credential/id shapes (flagged).
func TestLooksSecret(t *testing.T) {
	for _, s := range []string{"claude-ai", "Claude Desktop", "claude-code", "cursor-vscode", "Visual Studio Code",
		"VisualStudioCodeInsiders", "mcp-inspector", "@modelcontextprotocol/sdk", "typescript-sdk-client", "mcp-go",
		"gemini-cli-mcp-client", "mcp-client-typescript-v2-sdk-1234", "spring-ai-mcp-client", "LEGACY_CLIENT_NAME_X",
		"x86_64-linux-gnu-client", "io.github.someone/mcp-client", "1.32.2", "0.44.0-rc.1", "v1.2.1",
		"1.0.0+build.20260101", "1.2.3-beta.4+exp.sha.5114f85", "10.1.0-nightly.20260612"} {
		if looksSecret(s) {
			t.Errorf("looksSecret(%q) = true, want false (a product name or version)", s)
		}
	}
	for _, s := range injected {
		if !looksSecret(s) {
			t.Errorf("looksSecret(%q) = false, want true", s)
		}
	}
}

func TestHandlerServesTextFormat(t *testing.T) {
	m, _ := script(t)
	srv := httptest.NewServer(m.Handler()) // binds 127.0.0.1
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`tasksbridge_legacy_calls_total{client="claude-code",method="tasks/result"} 1`,
		"tasksbridge_upstream_polls_total 2", "go_goroutines ", "process_start_time_seconds ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	var nilM *Metrics
	rec := httptest.NewRecorder()
	nilM.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Metrics handler: %d", rec.Code)
	}
}

// TestNilMetricsIsNoOp: components built without metrics call a nil *Metrics.
func TestNilMetricsIsNoOp(t *testing.T) {
	var m *Metrics
	m.ObserveCall(Call{Method: "tools/call", Legacy: true})
	m.Request("", "", "", "")
	m.LegacyCall("", "")
	m.ClientSeen("", "", "")
	m.SessionOpened(EraLegacy)
	m.Refused(LimitSessions)
	m.SessionClosed(EraLegacy)
	m.SetSessionsActive(EraLegacy, 1)
	m.TaskCreated("", "")
	m.TaskTransition("", "working")
	m.SetTasksActive("working", 1)
	m.ObserveResultWait(time.Second)
	m.InputRequest("", "")
	m.UpstreamRequest("", nil, 0)
	m.UpstreamPoll()
	ran := false
	if err := m.StoreOp("get_task", func() error { ran = true; return sessionmap.ErrNotFound }); !ran || !errors.Is(err, sessionmap.ErrNotFound) {
		t.Fatalf("nil StoreOp: ran=%v err=%v", ran, err)
	}
}

// TestConcurrentUse exercises every method and scrapes concurrently (-race).
func TestConcurrentUse(t *testing.T) {
	m := New(Options{MaxClients: 5})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				name := fmt.Sprintf("c%d", (g*200+i)%13)
				m.ObserveCall(Call{ClientEra: EraLegacy, UpstreamEra: EraModern, Method: "tasks/get", ClientName: name, ClientVersion: "1", Legacy: true})
				m.TaskTransition("", "working")
				m.TaskTransition("working", "completed")
				m.UpstreamPoll()
				_ = m.StoreOp("get_task", func() error { return nil })
			}
		}()
	}
	for range 20 {
		if _, err := m.Registry().Gather(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if got := testutil.ToFloat64(m.upstreamPolls); got != 1600 {
		t.Fatalf("polls %g, want 1600", got)
	}
	if got := testutil.ToFloat64(m.tasksActive.WithLabelValues("completed")); got != 1600 {
		t.Fatalf("completed %g, want 1600", got)
	}
	if got := labelValues(t, m.Registry(), "client")["tasksbridge_legacy_calls_total"]; len(got) != 6 {
		t.Fatalf("client values %v, want 5 + other", got)
	}
}

// TestOutboxMetrics: the outbox gauge follows deliveries up and down and
// the retry counter counts retries, by method.
func TestOutboxMetrics(t *testing.T) {
	m := New(Options{})
	m.OutboxPending("tasks/cancel", 1)
	m.OutboxPending("tasks/cancel", 1)
	m.OutboxPending("tasks/cancel", -1)
	m.OutboxRetry("tasks/cancel")
	m.OutboxRetry("tasks/cancel")
	m.OutboxRetry("secret-task-id")
	expected := `
# HELP tasksbridge_upstream_outbox_pending Upstream side effects (tasks/cancel, tasks/update input answers) the bridge owes and is still delivering, by method.
# TYPE tasksbridge_upstream_outbox_pending gauge
tasksbridge_upstream_outbox_pending{method="tasks/cancel"} 1
# HELP tasksbridge_upstream_outbox_retries_total Retries of upstream side effects (tasks/cancel, tasks/update input answers) after a failed attempt, by method.
# TYPE tasksbridge_upstream_outbox_retries_total counter
tasksbridge_upstream_outbox_retries_total{method="other"} 1
tasksbridge_upstream_outbox_retries_total{method="tasks/cancel"} 2
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(expected),
		"tasksbridge_upstream_outbox_pending", "tasksbridge_upstream_outbox_retries_total"); err != nil {
		t.Fatal(err)
	}
}
