package rollout

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/ops/metrics"
)

// TestRealPrometheus scrapes a real ops/metrics registry with a real
// Prometheus (Debian's `prometheus` package) and runs QueryPrometheus against
// it: first modern traffic only (removable), then a legacy client (not).
// Skipped when the prometheus binary is not installed; takes ~10 s.
func TestRealPrometheus(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not installed (Debian: apt-get install prometheus)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()

	m := metrics.New(metrics.Options{})
	modern := func() {
		m.ObserveCall(metrics.Call{ClientEra: metrics.EraModern, UpstreamEra: metrics.EraModern, Method: "tasks/get",
			ClientName: "inspector", ClientVersion: "0.9"})
	}
	legacy := func() {
		for _, method := range []string{"initialize", "tools/call", "tasks/result"} {
			m.ObserveCall(metrics.Call{ClientEra: metrics.EraLegacy, UpstreamEra: metrics.EraModern, Method: method,
				ClientName: "claude-code", ClientVersion: "1.2.0", Legacy: true})
		}
	}
	modern()
	target := httptest.NewServer(m.Handler()) // 127.0.0.1
	defer target.Close()

	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: tasksbridge
    metrics_path: /metrics
    static_configs:
      - targets: [%q]
`, strings.TrimPrefix(target.URL, "http://"))), 0o600); err != nil {
		t.Fatal(err)
	}
	// A free loopback port for Prometheus' own listener.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	}()
	promURL := "http://" + addr

	// waitFor polls Prometheus (an external process: there is nothing to
	// wait on but its API) until cond holds for the report.
	waitFor := func(what string, cond func(Report) bool) Report {
		t.Helper()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		var last error
		for {
			d, err := QueryPrometheus(ctx, http.DefaultClient, promURL, "1m")
			if err == nil {
				if r := Decide(d); cond(r) {
					return r
				}
			}
			last = err
			select {
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v (last error %v)", what, ctx.Err(), last)
			case <-tick.C:
			}
		}
	}

	r := waitFor("the first scrape", func(r Report) bool { return r.Replicas == 1 && len(r.Clients) == 1 })
	if !r.Verdict.Removable || r.Verdict.ExitCode() != 0 || r.Clients[0].Client != "inspector" {
		t.Fatalf("modern only: %+v", r)
	}

	legacy()
	r = waitFor("the legacy client", func(r Report) bool { return !r.Verdict.Removable })
	if r.Verdict.LegacyClients != 1 || r.Verdict.ExitCode() != ExitLegacyRemains || r.Clients[0].Client != "claude-code" {
		t.Fatalf("legacy client: %+v", r)
	}
	// A series born with value 3 has increase() 0 until it changes: more
	// traffic makes the legacy task calls visible.
	legacy()
	modern()
	r = waitFor("legacy task calls", func(r Report) bool { return r.Totals.LegacyTaskCalls > 0 })
	if !strings.HasPrefix(r.Verdict.Line, "1 client still uses legacy tasks (") {
		t.Errorf("verdict line %q", r.Verdict.Line)
	}
}
