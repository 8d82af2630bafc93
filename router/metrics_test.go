package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/rollout"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// legacyTraffic is a legacy (2025-11-25) client in front of a modern
// upstream: the go-sdk client opens the session and makes ordinary calls,
// then raw legacy task calls ride on the same session: a task-augmented
// tools/call (an upstream task), one answered synchronously (a synthesized
// task), one that elicits during tasks/result, tasks/get, tasks/result,
// tasks/list and a tasks/cancel of a finished task (-32602).
// It returns the ids it saw (to prove none reaches a label) and a function
// that ends the session.
func legacyTraffic(ctx context.Context, t *testing.T, url string) (ids []string, closeSession func()) {
	t.Helper()
	// An elicitation handler makes go-sdk declare the capability; the
	// elicitation itself is answered by the raw client below.
	c := mcp.NewClient(&mcp.Implementation{Name: "legacy-sdk-app", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("legacy connect: %v", err)
	}
	ids = append(ids, cs.ID())
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil || r.IsError {
		t.Fatalf("echo: %v %v", r, err)
	}

	raw := newLegacyClient(t, url, "legacy-sdk-app")
	raw.sid = cs.ID()
	created := mustOK(t, "tools/call task", raw.call(ctx, "tools/call", map[string]any{
		"name": "slow_task", "arguments": map[string]any{"ms": 5, "text": "done"}, "task": map[string]any{}}))
	id := field(t, created, "task.taskId")
	synth := mustOK(t, "tools/call echo task", raw.call(ctx, "tools/call", map[string]any{
		"name": "echo", "arguments": map[string]any{"text": "sync"}, "task": map[string]any{}}))
	ids = append(ids, id, field(t, synth, "task.taskId"))
	mustOK(t, "tasks/get", raw.call(ctx, "tasks/get", map[string]any{"taskId": id}))
	mustOK(t, "tasks/result", raw.call(ctx, "tasks/result", map[string]any{"taskId": id}))
	mustOK(t, "tasks/list", raw.call(ctx, "tasks/list", nil))
	if r := raw.call(ctx, "tasks/cancel", map[string]any{"taskId": id}); r.Err == nil || r.Err.Code != rpc.CodeInvalidParams {
		t.Fatalf("tasks/cancel of a completed task: %v", r)
	}
	elicit := mustOK(t, "tools/call elicit", raw.call(ctx, "tools/call", map[string]any{
		"name": "elicit_task", "arguments": map[string]any{"question": "answer?"}, "task": map[string]any{}}))
	raw.onRequest = func(method string, params json.RawMessage) (any, *rpc.Error) {
		return map[string]any{"action": "accept", "content": map[string]any{"answer": "42"}}, nil
	}
	r := raw.call(ctx, "tasks/result", map[string]any{"taskId": field(t, elicit, "task.taskId")})
	mustOK(t, "tasks/result elicit", r)
	if len(r.Requests) != 1 || r.Requests[0] != "elicitation/create" {
		t.Fatalf("tasks/result relayed %v, want one elicitation/create", r.Requests)
	}
	return append(ids, field(t, elicit, "task.taskId")), func() { _ = cs.Close() }
}

// modernTraffic is a modern (2026-07-28 + tasks extension) client: the
// go-sdk client discovers, lists, calls echo and a task tool (go-sdk drops
// the CreateTaskResult, but the wire carries it); a raw client
// with the same clientInfo creates one more task and reads it with tasks/get.
func modernTraffic(ctx context.Context, t *testing.T, url string) (ids []string) {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(modern.TasksExtensionID, nil)
	c := mcp.NewClient(&mcp.Implementation{Name: "modern-sdk-app", Version: "2.0.0"}, &mcp.ClientOptions{Capabilities: caps})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: modern.ProtocolVersion})
	if err != nil {
		t.Fatalf("modern connect: %v", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil || r.IsError {
		t.Fatalf("echo: %v %v", r, err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow_task", Arguments: map[string]any{"ms": 5, "text": "x"}}); err != nil {
		t.Fatalf("slow_task: %v", err)
	}
	raw := newModernClient(t, url, "modern-sdk-app")
	ct := mustOK(t, "tools/call", raw.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 5, "text": "y"}}))
	mustOK(t, "tasks/get", raw.call(ctx, "tasks/get", map[string]any{"taskId": field(t, ct, "taskId")}))
	return []string{field(t, ct, "taskId")}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	code, body := get(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", url, code)
	}
	return body
}

// families parses a /metrics page.
func families(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// sample returns the value of the series of family name with exactly
// labels (counter, gauge, or a histogram's count).
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, l := range m.GetLabel() {
			if want[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func total(fams map[string]*dto.MetricFamily, name string) float64 {
	var n float64
	for _, m := range fams[name].GetMetric() {
		n += m.GetCounter().GetValue()
	}
	return n
}

// TestMetricsAcceptance is the metrics acceptance test: a legacy and a modern
// client drive traffic through ONE bridge listener (legacy client ⇒ legacy
// face ⇒ modern upstream; modern client ⇒ passthrough ⇒ the same upstream),
// and /metrics shows exact counter values and label sets; the rollout
// report over that page says legacy traffic remains (exit 4).
func TestMetricsAcceptance(t *testing.T) {
	ctx := ctxT(t)
	br := startBridge(t, router.Config{Upstream: startModern(t)})
	ids, closeLegacy := legacyTraffic(ctx, t, br.url)
	ids = append(ids, modernTraffic(ctx, t, br.url)...)

	// While the legacy session is open: its three tasks are tracked
	// (completed), the session is active.
	const open = `
# HELP tasksbridge_requests_total Client requests handled, by client era, upstream era, MCP method and outcome.
# TYPE tasksbridge_requests_total counter
tasksbridge_requests_total{client_era="legacy",method="initialize",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tasks/cancel",outcome="invalid_params",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tasks/get",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tasks/list",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="legacy",method="tasks/result",outcome="ok",upstream_era="modern"} 2
tasksbridge_requests_total{client_era="legacy",method="tools/call",outcome="ok",upstream_era="modern"} 4
tasksbridge_requests_total{client_era="legacy",method="tools/list",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="modern",method="server/discover",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="modern",method="tasks/get",outcome="ok",upstream_era="modern"} 1
tasksbridge_requests_total{client_era="modern",method="tools/call",outcome="ok",upstream_era="modern"} 3
tasksbridge_requests_total{client_era="modern",method="tools/list",outcome="ok",upstream_era="modern"} 1
# HELP tasksbridge_legacy_calls_total Requests of legacy (2025-11-25) clients that use the legacy task protocol or session setup (initialize, tools/call with task, tasks/*), by method and client name.
# TYPE tasksbridge_legacy_calls_total counter
tasksbridge_legacy_calls_total{client="legacy-sdk-app",method="initialize"} 1
tasksbridge_legacy_calls_total{client="legacy-sdk-app",method="tasks/cancel"} 1
tasksbridge_legacy_calls_total{client="legacy-sdk-app",method="tasks/get"} 1
tasksbridge_legacy_calls_total{client="legacy-sdk-app",method="tasks/list"} 1
tasksbridge_legacy_calls_total{client="legacy-sdk-app",method="tasks/result"} 2
tasksbridge_legacy_calls_total{client="legacy-sdk-app",method="tools/call"} 3
# HELP tasksbridge_client_requests_total Client requests by client era, clientInfo name and version (for the bridge rollout table).
# TYPE tasksbridge_client_requests_total counter
tasksbridge_client_requests_total{client="legacy-sdk-app",era="legacy",version="1.0.0"} 11
tasksbridge_client_requests_total{client="modern-sdk-app",era="modern",version="2.0.0"} 6
# HELP tasksbridge_clients 1 for each client (era, clientInfo name, version) seen within the window (default 24h).
# TYPE tasksbridge_clients gauge
tasksbridge_clients{client="legacy-sdk-app",era="legacy",version="1.0.0"} 1
tasksbridge_clients{client="modern-sdk-app",era="modern",version="2.0.0"} 1
# HELP tasksbridge_tasks_created_total Tasks handed to clients, by direction (client era _to_ upstream era) and origin (upstream task or synthesized from a synchronous answer).
# TYPE tasksbridge_tasks_created_total counter
tasksbridge_tasks_created_total{direction="legacy_to_modern",origin="synthesized"} 1
tasksbridge_tasks_created_total{direction="legacy_to_modern",origin="upstream"} 2
tasksbridge_tasks_created_total{direction="modern_to_modern",origin="upstream"} 2
# HELP tasksbridge_input_requests_total Input requests (elicitation, sampling, roots) relayed between a task and a client, by method and outcome.
# TYPE tasksbridge_input_requests_total counter
tasksbridge_input_requests_total{method="elicitation/create",outcome="ok"} 1
# HELP tasksbridge_sessions_active Client sessions open in this process, by era.
# TYPE tasksbridge_sessions_active gauge
tasksbridge_sessions_active{era="legacy"} 1
tasksbridge_sessions_active{era="modern"} 0
# HELP tasksbridge_tasks_active Tasks this process tracks, by current status.
# TYPE tasksbridge_tasks_active gauge
tasksbridge_tasks_active{status="cancelled"} 0
tasksbridge_tasks_active{status="completed"} 3
tasksbridge_tasks_active{status="failed"} 0
tasksbridge_tasks_active{status="input_required"} 0
tasksbridge_tasks_active{status="working"} 0
`
	names := []string{"tasksbridge_requests_total", "tasksbridge_legacy_calls_total", "tasksbridge_client_requests_total",
		"tasksbridge_clients", "tasksbridge_tasks_created_total", "tasksbridge_input_requests_total",
		"tasksbridge_sessions_active", "tasksbridge_tasks_active"}
	if err := testutil.ScrapeAndCompare(br.base+"/metrics", strings.NewReader(open), names...); err != nil {
		t.Error(err)
	}

	text := scrape(t, br.base+"/metrics")
	fams := families(t, text)
	// Upstream: every request that left the process, whoever sent it.
	for _, c := range []struct {
		method string
		want   float64
	}{
		{"tools/call", 7},      // 4 legacy (through the face) + 3 modern (passed through)
		{"server/discover", 3}, // the era probe, the face's initialize, the modern client's
		{"tools/list", 2},
		{"tasks/update", 1}, // the elicitation answer
	} {
		if got, _ := sample(fams, "tasksbridge_upstream_requests_total", "code", "ok", "method", c.method); got != c.want {
			t.Errorf("upstream %s = %v, want %v", c.method, got, c.want)
		}
	}
	polls, _ := sample(fams, "tasksbridge_upstream_polls_total")
	gets, _ := sample(fams, "tasksbridge_upstream_requests_total", "code", "ok", "method", "tasks/get")
	if polls < 1 || gets != polls+1 { // the modern client's tasks/get was passed through, not a poll
		t.Errorf("polls %v, upstream tasks/get %v: want polls ≥ 1 and one passed-through tasks/get", polls, gets)
	}
	if n, _ := sample(fams, "tasksbridge_upstream_request_duration_seconds"); n != total(fams, "tasksbridge_upstream_requests_total") {
		t.Errorf("upstream duration count %v != upstream requests %v", n, total(fams, "tasksbridge_upstream_requests_total"))
	}
	if n, _ := sample(fams, "tasksbridge_task_result_wait_seconds"); n != 2 {
		t.Errorf("tasks/result waits observed %v, want 2", n)
	}
	if n, _ := sample(fams, "tasksbridge_store_operations_total", "op", "create_task", "outcome", "ok"); n != 3 {
		t.Errorf("store create_task %v, want 3 (two upstream tasks, one synthesized)", n)
	}
	if n, _ := sample(fams, "tasksbridge_store_operation_duration_seconds"); n != total(fams, "tasksbridge_store_operations_total") {
		t.Errorf("store duration count %v != store operations %v", n, total(fams, "tasksbridge_store_operations_total"))
	}
	// No id in any label (docs/ARCHITECTURE.md, No secret or id in logs and labels).
	for _, id := range ids {
		if id != "" && strings.Contains(text, id) {
			t.Errorf("/metrics carries the id %q", id)
		}
	}

	// bridge rollout over this page: legacy remains (exit 4).
	d, err := rollout.FetchMetrics(ctx, http.DefaultClient, br.base+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	rep := rollout.Decide(d)
	var out bytes.Buffer
	if err := rollout.WriteText(&out, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"legacy-sdk-app  1.0.0    legacy  11", "modern-sdk-app  2.0.0    modern  6", "1 client still uses legacy tasks"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rollout report lacks %q:\n%s", want, out.String())
		}
	}
	if rep.Verdict.ExitCode() != rollout.ExitLegacyRemains {
		t.Errorf("rollout exit %d, want %d", rep.Verdict.ExitCode(), rollout.ExitLegacyRemains)
	}

	// The session ends (DELETE): its session-scoped tasks go with it, before
	// the DELETE is answered. (sessions_active drops when go-sdk's session
	// goroutine ends, which the DELETE's answer does not wait for.)
	closeLegacy()
	const closed = `
# HELP tasksbridge_tasks_active Tasks this process tracks, by current status.
# TYPE tasksbridge_tasks_active gauge
tasksbridge_tasks_active{status="cancelled"} 0
tasksbridge_tasks_active{status="completed"} 0
tasksbridge_tasks_active{status="failed"} 0
tasksbridge_tasks_active{status="input_required"} 0
tasksbridge_tasks_active{status="working"} 0
`
	if err := testutil.ScrapeAndCompare(br.base+"/metrics", strings.NewReader(closed), "tasksbridge_tasks_active"); err != nil {
		t.Error(err)
	}
}

// TestMetricsModernOnly: a bridge that saw only modern traffic can be
// removed (rollout exit 0), and counts no legacy series at all.
func TestMetricsModernOnly(t *testing.T) {
	ctx := ctxT(t)
	br := startBridge(t, router.Config{Upstream: startModern(t)})
	modernTraffic(ctx, t, br.url)
	fams := families(t, scrape(t, br.base+"/metrics"))
	if n := len(fams["tasksbridge_legacy_calls_total"].GetMetric()); n != 0 {
		t.Errorf("legacy calls series: %d", n)
	}
	d, err := rollout.FetchMetrics(ctx, http.DefaultClient, br.base+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	rep := rollout.Decide(d)
	if !rep.Verdict.Removable || rep.Verdict.ExitCode() != 0 || !strings.Contains(rep.Verdict.Line, "can be removed") {
		t.Errorf("verdict %+v", rep.Verdict)
	}
}
