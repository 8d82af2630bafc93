package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/ops/rollout"
)

// runRollout runs `bridge rollout args...` in-process and returns its stdout
// and the exit code main would use. ExitErrHandler is replaced so that a
// cli.Exit does not end the test binary.
func runRolloutCmd(t *testing.T, args ...string) (string, int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	app := newApp()
	var out bytes.Buffer
	app.Writer = &out
	app.ErrWriter = io.Discard
	app.ExitErrHandler = func(*cli.Context, error) {}
	err := app.RunContext(ctx, append([]string{"bridge", "rollout"}, args...))
	code := 0
	if err != nil {
		code = 1
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			code = ec.ExitCode()
		}
	}
	return out.String(), code, err
}

// bridgeMetrics serves a real ops/metrics registry after the calls the
// faces make for a legacy client (when withLegacy) and a modern client.
func bridgeMetrics(t *testing.T, withLegacy bool) string {
	t.Helper()
	m := metrics.New(metrics.Options{})
	if withLegacy {
		for _, method := range []string{"initialize", "tools/call", "tasks/result"} {
			m.ObserveCall(metrics.Call{ClientEra: metrics.EraLegacy, UpstreamEra: metrics.EraModern, Method: method,
				ClientName: "legacy-client", ClientVersion: "1.0.0", Legacy: true})
		}
	}
	for _, method := range []string{"server/discover", "tools/call", "tasks/get"} {
		m.ObserveCall(metrics.Call{ClientEra: metrics.EraModern, UpstreamEra: metrics.EraModern, Method: method,
			ClientName: "modern-client", ClientVersion: "2.0.0"})
	}
	m.TaskCreated(metrics.DirectionModernToModern, metrics.OriginUpstream)
	srv := httptest.NewServer(m.Handler()) // 127.0.0.1
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// TestRolloutMetricsURL: the table and the verdict with exit codes 4 and 0.
func TestRolloutMetricsURL(t *testing.T) {
	out, code, err := runRolloutCmd(t, "--metrics-url", bridgeMetrics(t, true))
	if code != rollout.ExitLegacyRemains {
		t.Fatalf("exit %d (%v), want 4; output:\n%s", code, err, out)
	}
	for _, want := range []string{
		"CLIENT         VERSION  ERA     REQUESTS  LEGACY SHARE  LAST SEEN",
		"legacy-client  1.0.0    legacy  3         100%",
		"modern-client  2.0.0    modern  3         -",
		"\n1 client still uses legacy tasks (50% of task traffic)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, code, err = runRolloutCmd(t, "--metrics-url", bridgeMetrics(t, false))
	if code != 0 || err != nil || !strings.HasSuffix(out, "\nno legacy task traffic: the bridge can be removed\n") {
		t.Fatalf("modern only: exit %d (%v), output:\n%s", code, err, out)
	}
}

// TestRolloutSeveralMetricsURLs: with one /metrics URL per replica the
// counts are summed, and the sum changes the verdict. The modern-only replica
// alone says "removable" (exit 0); together with the replica that served a
// legacy client the verdict is "legacy remains" (exit 4), with the requests
// of the client both served added up (3+3) and the legacy share computed over
// the whole fleet's task traffic (2 legacy task calls of 2+4 task calls, 33%,
// where the legacy replica alone says 50%).
func TestRolloutSeveralMetricsURLs(t *testing.T) {
	modern, legacy := bridgeMetrics(t, false), bridgeMetrics(t, true)

	out, code, err := runRolloutCmd(t, "--metrics-url", modern)
	if code != 0 || err != nil || !strings.HasSuffix(out, "\nno legacy task traffic: the bridge can be removed\n") {
		t.Fatalf("modern replica alone: exit %d (%v), output:\n%s", code, err, out)
	}
	out, _, _ = runRolloutCmd(t, "--metrics-url", legacy)
	if !strings.Contains(out, "(50% of task traffic)") {
		t.Fatalf("legacy replica alone: output:\n%s", out)
	}

	for name, args := range map[string][]string{
		"repeated flag":   {"--metrics-url", modern, "--metrics-url", legacy},
		"comma-separated": {"--metrics-url", modern + "," + legacy},
	} {
		out, code, err := runRolloutCmd(t, args...)
		if code != rollout.ExitLegacyRemains {
			t.Errorf("%s: exit %d (%v), want 4; output:\n%s", name, code, err, out)
			continue
		}
		for _, want := range []string{
			"source: " + modern + ", " + legacy + " (since the bridge started, 2 replicas)",
			"legacy-client  1.0.0    legacy  3         100%",
			"modern-client  2.0.0    modern  6         -",
			"\n1 client still uses legacy tasks (33% of task traffic)\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", name, want, out)
			}
		}
	}

	// Environment variable, comma-separated, as for the flag.
	t.Setenv("TASKSBRIDGE_METRICS_URL", modern+","+legacy)
	if out, code, err := runRolloutCmd(t, "--json"); code != rollout.ExitLegacyRemains {
		t.Errorf("TASKSBRIDGE_METRICS_URL with two URLs: exit %d (%v), want 4; output:\n%s", code, err, out)
	}
}

// TestRolloutSeveralMetricsURLsErrors: a replica that does not answer, or a
// URL named twice, is an error (exit 1) rather than a verdict on part of the
// fleet or on double counts.
func TestRolloutSeveralMetricsURLsErrors(t *testing.T) {
	good := bridgeMetrics(t, false)
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL + "/metrics"
	srv.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-url", good, "--metrics-url", dead}, "rollout: cannot reach bridge metrics at " + dead},
		{[]string{"--metrics-url", good + "," + good}, "metrics URL " + good + " is given twice"},
		{[]string{"--metrics-url", good, "--prometheus", dead}, "give exactly one of"},
	} {
		out, code, err := runRolloutCmd(t, c.args...)
		if code != 1 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 1 and %q", c.args, code, err, c.want)
		}
		if out != "" {
			t.Errorf("%v: printed a report on error:\n%s", c.args, out)
		}
	}
}

func TestRolloutJSON(t *testing.T) {
	out, code, _ := runRolloutCmd(t, "--json", "--metrics-url", bridgeMetrics(t, true))
	var r rollout.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if code != 4 || r.Verdict.Removable || r.Verdict.LegacyClients != 1 || len(r.Clients) != 2 || r.Clients[0].Client != "legacy-client" {
		t.Errorf("exit %d, report %+v", code, r)
	}
}

// TestRolloutPrometheus runs against recorded Prometheus API answers
// (ops/rollout/testdata/prometheus), checking the exact PromQL sent.
func TestRolloutPrometheus(t *testing.T) {
	for _, c := range []struct {
		scenario string
		code     int
		line     string
	}{
		{"legacy", 4, "3 clients still use legacy tasks (33% of task traffic)"},
		{"none", 0, "no legacy task traffic: the bridge can be removed"},
	} {
		byQuery := map[string]string{}
		for field, q := range rollout.Queries("7d") {
			byQuery[q] = field
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			field, ok := byQuery[r.URL.Query().Get("query")]
			if r.URL.Path != "/api/v1/query" || !ok {
				t.Errorf("unexpected query %s %q", r.URL.Path, r.URL.Query().Get("query"))
				http.Error(w, "unexpected", http.StatusBadRequest)
				return
			}
			b, err := os.ReadFile(filepath.Join("..", "..", "ops", "rollout", "testdata", "prometheus", c.scenario, field+".json"))
			if err != nil {
				t.Error(err)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
		}))
		out, code, err := runRolloutCmd(t, "--prometheus", srv.URL, "--window", "7d")
		srv.Close()
		if code != c.code || !strings.Contains(out, "(window 7d, ") || !strings.HasSuffix(out, "\n"+c.line+"\n") {
			t.Errorf("%s: exit %d (%v), output:\n%s", c.scenario, code, err, out)
		}
	}
}

func TestRolloutErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL + "/metrics"
	srv.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-url", dead}, "rollout: cannot reach bridge metrics at " + dead},
		{[]string{"--prometheus", srv.URL}, "rollout: cannot reach Prometheus at " + srv.URL},
		{nil, "give exactly one of --metrics-url URL or --prometheus URL"},
		{[]string{"--metrics-url", dead, "--prometheus", dead}, "give exactly one of"},
		{[]string{"--metrics-url", dead, "--window", "1d"}, "--window applies to --prometheus only"},
		{[]string{"--prometheus", dead, "--window", "soon"}, `window "soon"`},
		{[]string{"--metrics-url", "not a url"}, "is not an http(s) URL"},
	} {
		_, code, err := runRolloutCmd(t, c.args...)
		if code != 1 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 1 and %q", c.args, code, err, c.want)
		}
	}
}

// TestRolloutProcessExitCodes runs the real main (this test binary
// re-executed) so the exit codes a shell sees are checked, not just the
// errors: 4, 0 and 1.
func TestRolloutProcessExitCodes(t *testing.T) {
	if os.Getenv("TASKSBRIDGE_ROLLOUT_HELPER") != "" {
		return
	}
	legacy, modern := bridgeMetrics(t, true), bridgeMetrics(t, false)
	for url, want := range map[string]int{legacy: 4, modern: 0, "http://127.0.0.1:1/metrics": 1} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRolloutHelperProcess$")
		cmd.Env = append(os.Environ(), "TASKSBRIDGE_ROLLOUT_HELPER="+url)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Errorf("%s: exit %d, want %d; stderr: %s", url, code, want, stderr.String())
		}
		if want == 1 && !strings.Contains(stderr.String(), "bridge: rollout: cannot reach bridge metrics at http://127.0.0.1:1/metrics") {
			t.Errorf("stderr %q", stderr.String())
		}
	}
}

// TestRolloutHelperProcess is the child of TestRolloutProcessExitCodes.
func TestRolloutHelperProcess(t *testing.T) {
	url := os.Getenv("TASKSBRIDGE_ROLLOUT_HELPER")
	if url == "" {
		t.Skip("helper process for TestRolloutProcessExitCodes")
	}
	os.Args = []string{"bridge", "rollout", "--metrics-url", url, "--timeout", "10s"}
	main()
	os.Exit(0) // main returned: success
}
