package metrics

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The docs live at the module root; go test runs in the package directory.
var (
	dashboardPath = filepath.Join("..", "..", "docs", "grafana", "tasksbridge.json")
	metricsMDPath = filepath.Join("..", "..", "docs", "METRICS.md")
)

var metricRef = regexp.MustCompile(`tasksbridge_[a-z_]+`)

// registered returns the tasksbridge_ metric family names the registry
// gathers once every collector has been used (script touches them all).
func registered(t *testing.T) map[string]bool {
	t.Helper()
	m, _ := script(t)
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), Namespace+"_") {
			names[mf.GetName()] = true
		}
	}
	return names
}

// The docs/METRICS.md contract: every one of these must be registered.
var contract = []string{
	"tasksbridge_requests_total", "tasksbridge_legacy_calls_total", "tasksbridge_clients",
	"tasksbridge_sessions_active", "tasksbridge_tasks_active", "tasksbridge_tasks_created_total",
	"tasksbridge_task_result_wait_seconds", "tasksbridge_input_requests_total", "tasksbridge_upstream_requests_total",
	"tasksbridge_upstream_request_duration_seconds", "tasksbridge_upstream_polls_total",
	"tasksbridge_store_operations_total", "tasksbridge_store_operation_duration_seconds",
	"tasksbridge_upstream_outbox_pending", "tasksbridge_upstream_outbox_retries_total", "tasksbridge_upstream_up",
}

func TestContractMetricsRegistered(t *testing.T) {
	reg := registered(t)
	for _, name := range contract {
		if !reg[name] {
			t.Errorf("%s is not registered", name)
		}
	}
	m := New(Options{})
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var goOK, procOK bool
	for _, mf := range mfs {
		goOK = goOK || strings.HasPrefix(mf.GetName(), "go_")
		procOK = procOK || strings.HasPrefix(mf.GetName(), "process_")
	}
	if !goOK || !procOK {
		t.Errorf("standard collectors missing: go %v, process %v", goOK, procOK)
	}
}

// checkRefs reports tasksbridge_ identifiers in text that the registry does
// not export (after stripping a histogram's _bucket/_sum/_count suffix).
func checkRefs(t *testing.T, where, text string, reg map[string]bool) {
	t.Helper()
	for _, ref := range metricRef.FindAllString(text, -1) {
		name := ref
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(ref, suffix); ok && reg[base] {
				name = base
			}
		}
		if !reg[name] {
			t.Errorf("%s names %s, which ops/metrics does not register", where, ref)
		}
	}
}

type grafanaPanel struct {
	Type    string         `json:"type"`
	Title   string         `json:"title"`
	Panels  []grafanaPanel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

func dashboardExprs(t *testing.T) (titles []string, exprs []string, raw []byte) {
	t.Helper()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title         string         `json:"title"`
		UID           string         `json:"uid"`
		SchemaVersion int            `json:"schemaVersion"`
		Panels        []grafanaPanel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s does not parse: %v", dashboardPath, err)
	}
	// Grafana 10.0 writes schemaVersion 38.
	if dash.SchemaVersion < 38 || dash.UID == "" || dash.Title == "" {
		t.Errorf("dashboard: schemaVersion %d uid %q title %q", dash.SchemaVersion, dash.UID, dash.Title)
	}
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			titles = append(titles, p.Title)
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no queries", p.Title)
			}
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("panel %q has an empty query", p.Title)
				}
				exprs = append(exprs, tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	return titles, exprs, raw
}

// TestGrafanaDashboard: docs/grafana/tasksbridge.json parses, has the panels
// docs/METRICS.md names, and every PromQL expression names only metrics the bridge
// registers.
func TestGrafanaDashboard(t *testing.T) {
	titles, exprs, raw := dashboardExprs(t)
	for _, want := range []string{"Legacy share over time", "Legacy calls by client", "Era mix", "Tasks by status",
		"tasks/result wait latency", "Upstream errors", "Upstream latency", "Store latency"} {
		if !slices.Contains(titles, want) {
			t.Errorf("dashboard lacks panel %q (has %q)", want, titles)
		}
	}
	reg := registered(t)
	used := map[string]bool{}
	for _, e := range exprs {
		checkRefs(t, "dashboard query "+e, e, reg)
		if strings.Count(e, "(") != strings.Count(e, ")") || strings.Count(e, "{") != strings.Count(e, "}") ||
			strings.Count(e, "[") != strings.Count(e, "]") {
			t.Errorf("unbalanced brackets in %s", e)
		}
		for _, ref := range metricRef.FindAllString(e, -1) {
			used[ref] = true
		}
	}
	// Descriptions and template variables too.
	checkRefs(t, "dashboard JSON", string(raw), reg)
	for _, want := range []string{"tasksbridge_task_result_wait_seconds_bucket", "tasksbridge_legacy_calls_total",
		"tasksbridge_tasks_active", "tasksbridge_store_operation_duration_seconds_bucket"} {
		if !used[want] {
			t.Errorf("no dashboard query uses %s", want)
		}
	}
}

// TestMetricsDocumented: every registered tasksbridge_ metric has a section
// in docs/METRICS.md, every value of the fixed label sets is listed there,
// and the page names no metric the bridge does not register.
func TestMetricsDocumented(t *testing.T) {
	b, err := os.ReadFile(metricsMDPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	reg := registered(t)
	for name := range reg {
		if !strings.Contains(doc, "### `"+name+"`") {
			t.Errorf("docs/METRICS.md has no section \"### `%s`\"", name)
		}
	}
	checkRefs(t, "docs/METRICS.md", doc, reg)
	var values []string
	values = append(values, Outcomes()...)
	values = append(values, Codes()...)
	values = append(values, Methods()...)
	values = append(values, keys(statuses)...)
	values = append(values, keys(directions)...)
	values = append(values, keys(origins)...)
	values = append(values, keys(eras)...)
	values = append(values, keys(storeOps)...)
	values = append(values, keys(storeOutcomes)...)
	values = append(values, Other, Unknown)
	for _, v := range values {
		if !strings.Contains(doc, "`"+v+"`") {
			t.Errorf("docs/METRICS.md does not list label value `%s`", v)
		}
	}
	for _, want := range []string{"bridge rollout --metrics-url", "bridge rollout --prometheus", "| 0 |", "| 4 |", "| 1 |"} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/METRICS.md lacks %q", want)
		}
	}
}

// TestPromQLParsesWithPromtool checks every dashboard query and the alert
// rules of docs/METRICS.md with promtool's PromQL parser, when promtool is
// installed (Debian: apt-get install prometheus); skipped otherwise.
func TestPromQLParsesWithPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed")
	}
	_, exprs, _ := dashboardExprs(t)
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	vars := strings.NewReplacer("$__rate_interval", "5m", "$job", ".*")
	for i, e := range exprs {
		q, _ := json.Marshal(vars.Replace(e)) // a JSON string is a valid YAML string
		fmt.Fprintf(&rules, "      - record: dashboard:query%d\n        expr: %s\n", i, q)
	}
	dir := t.TempDir()
	dashRules := filepath.Join(dir, "dashboard.rules.yml")
	if err := os.WriteFile(dashRules, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	doc, err := os.ReadFile(metricsMDPath)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "```yaml\n")
	alerts, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 || !strings.Contains(alerts, "groups:") {
		t.Fatal("docs/METRICS.md has no ```yaml alert rules block")
	}
	alertRules := filepath.Join(dir, "alerts.rules.yml")
	if err := os.WriteFile(alertRules, []byte(alerts), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", dashRules, alertRules).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("SUCCESS: %d rules found", len(exprs))) {
		t.Errorf("promtool output:\n%s", out)
	}
}
