package rollout

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/ops/metrics"
)

// scripted returns a real metrics registry after the calls a legacy client
// (withLegacy) and a modern client make through the bridge.
func scripted(withLegacy bool) *metrics.Metrics {
	now := time.Unix(1_780_000_000, 0)
	m := metrics.New(metrics.Options{Now: func() time.Time { return now }})
	if withLegacy {
		for _, method := range []string{"initialize", "tools/call", "tasks/result", "tasks/get"} {
			m.ObserveCall(metrics.Call{ClientEra: metrics.EraLegacy, UpstreamEra: metrics.EraModern, Method: method,
				ClientName: "claude-code", ClientVersion: "1.2.0", Legacy: true})
		}
		m.ObserveCall(metrics.Call{ClientEra: metrics.EraLegacy, UpstreamEra: metrics.EraModern, Method: "tools/list",
			ClientName: "claude-code", ClientVersion: "1.2.0"})
		m.TaskCreated(metrics.DirectionLegacyToModern, metrics.OriginUpstream)
	}
	for _, method := range []string{"server/discover", "tools/call", "tasks/get", "tasks/get"} {
		m.ObserveCall(metrics.Call{ClientEra: metrics.EraModern, UpstreamEra: metrics.EraModern, Method: method,
			ClientName: "inspector", ClientVersion: "0.9"})
	}
	m.TaskCreated(metrics.DirectionModernToModern, metrics.OriginUpstream)
	return m
}

func serveMetrics(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// TestFetchMetricsFromRealRegistry reads a /metrics page produced by
// ops/metrics after scripted traffic, with and without legacy clients.
func TestFetchMetricsFromRealRegistry(t *testing.T) {
	ctx := context.Background()
	url := serveMetrics(t, scripted(true))
	d, err := FetchMetrics(ctx, http.DefaultClient, url)
	if err != nil {
		t.Fatal(err)
	}
	r := Decide(d)
	// legacy task calls 3 (tools/call, tasks/result, tasks/get); modern task
	// calls 2 tasks/get + 1 created task: 50%.
	if r.Verdict.Removable || r.Verdict.LegacyClients != 1 || r.Verdict.Line != "1 client still uses legacy tasks (50% of task traffic)" {
		t.Errorf("verdict %+v", r.Verdict)
	}
	if len(r.Clients) != 2 || r.Clients[0].Client != "claude-code" || r.Clients[0].Requests != 5 ||
		r.Clients[0].LegacyCalls != 4 || r.Clients[0].LastSeen.Unix() != 1_780_000_000 ||
		r.Clients[1].Client != "inspector" || r.Clients[1].Era != "modern" || r.Clients[1].Requests != 4 {
		t.Errorf("rows %+v", r.Clients)
	}
	if r.Source != url || r.Replicas != 1 || r.Window != SinceStart {
		t.Errorf("source %q replicas %d window %q", r.Source, r.Replicas, r.Window)
	}

	d, err = FetchMetrics(ctx, http.DefaultClient, serveMetrics(t, scripted(false)))
	if err != nil {
		t.Fatal(err)
	}
	if r := Decide(d); !r.Verdict.Removable || r.Verdict.Line != "no legacy task traffic: the bridge can be removed" || len(r.Clients) != 1 {
		t.Errorf("modern-only: %+v", r)
	}

	// A fresh bridge: no traffic yet, but still a tasksbridge page.
	d, err = FetchMetrics(ctx, http.DefaultClient, serveMetrics(t, metrics.New(metrics.Options{})))
	if err != nil {
		t.Fatal(err)
	}
	if r := Decide(d); !r.Verdict.Removable || !strings.Contains(r.Verdict.Line, "no client requests at all") {
		t.Errorf("fresh bridge: %+v", r.Verdict)
	}
}

func TestFetchMetricsErrors(t *testing.T) {
	ctx := context.Background()
	// A closed listener: the message names the URL, without credentials.
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := strings.Replace(srv.URL, "http://", "http://ops:hunter2@", 1) + "/metrics"
	srv.Close()
	_, err := FetchMetrics(ctx, http.DefaultClient, dead)
	if err == nil || !strings.Contains(err.Error(), "cannot reach bridge metrics at http://ops:xxxxx@127.0.0.1:") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("unreachable: %v", err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("# TYPE http_requests_total counter\nhttp_requests_total 3\n"))
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>{not metrics\n")) })
	live := httptest.NewServer(mux)
	defer live.Close()
	for path, want := range map[string]string{
		"/metrics": "not a tasksbridge /metrics page",
		"/garbage": "not a Prometheus text exposition",
		"/nope":    "HTTP 404 Not Found",
	} {
		if _, err := FetchMetrics(ctx, http.DefaultClient, live.URL+path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if _, err := FetchMetrics(ctx, http.DefaultClient, "ftp://example/metrics"); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("ftp URL: %v", err)
	}
}

// fakePrometheus serves recorded /api/v1/query answers from
// testdata/prometheus/<scenario>/<field>.json, and a Prometheus-style
// bad_data error for any query that is not exactly one of Queries(window).
func fakePrometheus(t *testing.T, scenario, window string) string {
	t.Helper()
	byQuery := map[string]string{}
	for field, q := range Queries(window) {
		byQuery[q] = field
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		field, ok := byQuery[r.URL.Query().Get("query")]
		if r.URL.Path != "/prom/api/v1/query" || !ok {
			t.Errorf("unexpected request %s %s", r.URL.Path, r.URL.Query().Get("query"))
			w.WriteHeader(http.StatusBadRequest)
			w.Write(readFixture(t, "error_bad_data.json"))
			return
		}
		w.Write(readFixture(t, filepath.Join(scenario, field+".json")))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/prom"
}

func readFixture(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "prometheus", name))
	if err != nil {
		t.Error(err)
	}
	return b
}

// TestQueryPrometheusRecorded runs the PromQL queries against recorded
// Prometheus API answers for a fleet with legacy traffic and one without.
func TestQueryPrometheusRecorded(t *testing.T) {
	ctx := context.Background()
	d, err := QueryPrometheus(ctx, http.DefaultClient, fakePrometheus(t, "legacy", "7d"), "7d")
	if err != nil {
		t.Fatal(err)
	}
	r := Decide(d)
	// Legacy task calls 1000 + 220 + 6 = 1226; modern 1800 + 20 + 5 tasks/*
	// + 700 created = 2525; 1226 / 3751 = 33%.
	if r.Verdict.Removable || r.Verdict.LegacyClients != 3 || r.Verdict.Line != "3 clients still use legacy tasks (33% of task traffic)" {
		t.Errorf("verdict %+v", r.Verdict)
	}
	if r.Replicas != 3 || r.Window != "7d" {
		t.Errorf("replicas %d window %q", r.Replicas, r.Window)
	}
	var got []string
	for _, c := range r.Clients {
		got = append(got, c.Client+"/"+c.Version+"/"+c.Era+"/"+count(c.Requests)+"/"+percent(c.LegacyShare))
	}
	want := "claude-code/1.2.0/legacy/1520/68% mcp-go-client/0.44.0/legacy/300/75% other/other/legacy/12/67% " +
		"claude-code/2.0.1/modern/8400/0% inspector/0.9.1/modern/2101/0%"
	if strings.Join(got, " ") != want {
		t.Errorf("rows\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if ls := r.Clients[1].LastSeen; !ls.Equal(time.Unix(1779712000, 0)) {
		t.Errorf("mcp-go-client last seen %v", ls)
	}

	d, err = QueryPrometheus(ctx, http.DefaultClient, fakePrometheus(t, "none", "7d"), "7d")
	if err != nil {
		t.Fatal(err)
	}
	if r := Decide(d); !r.Verdict.Removable || r.Verdict.Line != "no legacy task traffic: the bridge can be removed" ||
		r.Replicas != 2 || len(r.Clients) != 2 {
		t.Errorf("none: %+v", r)
	}
}

func TestQueryPrometheusErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := QueryPrometheus(ctx, http.DefaultClient, "http://127.0.0.1:9", "7x"); err == nil || !strings.Contains(err.Error(), `window "7x"`) {
		t.Errorf("bad window: %v", err)
	}
	if _, err := QueryPrometheus(ctx, http.DefaultClient, "http://127.0.0.1:9", "0d"); err == nil {
		t.Error("zero window accepted")
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/bad/"):
			w.WriteHeader(http.StatusBadRequest)
			w.Write(readFixture(t, "error_bad_data.json"))
		case strings.HasPrefix(r.URL.Path, "/empty/"):
			w.Write(readFixture(t, "empty.json"))
		default:
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html>bad gateway</html>"))
		}
	}))
	defer srv.Close()
	for path, want := range map[string]string{
		"/bad":   "failed: bad_data: invalid parameter",
		"/empty": "has no tasksbridge_upstream_polls_total over the last 7d: is the bridge scraped?",
		"/proxy": "HTTP 502 Bad Gateway, not a Prometheus API answer",
	} {
		if _, err := QueryPrometheus(ctx, http.DefaultClient, srv.URL+path, "7d"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	srv.Close()
	if _, err := QueryPrometheus(ctx, http.DefaultClient, srv.URL, "7d"); err == nil || !strings.Contains(err.Error(), "cannot reach Prometheus at "+srv.URL) {
		t.Errorf("unreachable: %v", err)
	}
}

func TestQueriesPromQL(t *testing.T) {
	q := Queries("7d")
	if got := q["ClientRequests"]; got != "sum by (client, version, era) (increase(tasksbridge_client_requests_total[7d]))" {
		t.Errorf("ClientRequests query %q", got)
	}
	if got := q["LegacyCalls"]; got != "sum by (client, method) (increase(tasksbridge_legacy_calls_total[7d]))" {
		t.Errorf("LegacyCalls query %q", got)
	}
}
