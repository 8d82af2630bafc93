package peers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TaskScenarios is every tasks-* server scenario of the conformance harness
// 0.2.0-alpha.12. CheckTaskScenarios fails a test
// when the harness lists one that is not here.
var TaskScenarios = []string{
	"tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields", "tasks-request-state-removal",
	"tasks-mrtr-input", "tasks-request-headers", "tasks-dispatch-and-envelope", "tasks-status-notifications",
	"tasks-required-task-error", "tasks-mrtr-composition",
}

// CheckTaskScenarios compares the harness's tasks-* scenarios with
// TaskScenarios.
func CheckTaskScenarios(t testing.TB) {
	t.Helper()
	node, cli := Node22(t), ConformanceCLI(t)
	out, err := exec.Command(node, cli, "list").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
		if name, _, _ := strings.Cut(line, " "); strings.HasPrefix(name, "tasks-") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list shows no tasks-* scenario:\n%s", out)
	}
	known := map[string]bool{}
	for _, s := range TaskScenarios {
		known[s] = true
	}
	for _, s := range names {
		if !known[s] {
			t.Errorf("the harness lists task scenario %s that peers.TaskScenarios does not name", s)
		}
	}
}

// ScenarioResult is one conformance scenario's outcome.
type ScenarioResult struct {
	OK     bool
	Checks int
	// Report lists every check that was neither SUCCESS, INFO nor SKIPPED.
	Report string
}

// RunScenario runs one server scenario of the conformance harness against
// url (Node 22, loopback preload) and reads its checks.json: OK when every
// check is SUCCESS, INFO or SKIPPED.
func RunScenario(t testing.TB, url, scenario string) ScenarioResult {
	t.Helper()
	return runScenario(t, Node22(t), ConformanceCLI(t), LoopbackPreload(t), url, scenario)
}

func runScenario(t testing.TB, node, cli, preload, url, scenario string) ScenarioResult {
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "server", "--url", url, "--scenario", scenario, "-o", out, "--timeout", "60000")
	cmd.Env = append(os.Environ(), "NODE_OPTIONS=-r "+preload)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	runErr := cmd.Run()
	files, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	if len(files) == 0 {
		return ScenarioResult{Report: fmt.Sprintf("no checks.json (%v):\n%s", runErr, buf.String())}
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return ScenarioResult{Report: err.Error()}
	}
	var checks []struct {
		ID, Name, Status, ErrorMessage string
		Details                        json.RawMessage
	}
	if err := json.Unmarshal(data, &checks); err != nil {
		return ScenarioResult{Report: fmt.Sprintf("checks.json: %v", err)}
	}
	var bad []string
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS", "INFO", "SKIPPED":
		default:
			bad = append(bad, fmt.Sprintf("  %s %s: %s %s", c.Status, c.ID, c.ErrorMessage, c.Details))
		}
	}
	if runErr != nil && len(bad) == 0 {
		bad = append(bad, fmt.Sprintf("  harness exited with %v:\n%s", runErr, buf.String()))
	}
	return ScenarioResult{OK: len(bad) == 0, Checks: len(checks), Report: strings.Join(bad, "\n")}
}

// RunScenarios runs scenarios against url, at most four at a time (the
// harness mostly sleeps between its checks), and returns their results.
func RunScenarios(t testing.TB, url string, scenarios []string) map[string]ScenarioResult {
	t.Helper()
	node, cli, preload := Node22(t), ConformanceCLI(t), LoopbackPreload(t)
	type res struct {
		sc string
		r  ScenarioResult
	}
	ch := make(chan res, len(scenarios))
	sem := make(chan struct{}, 4)
	for _, sc := range scenarios {
		go func(sc string) {
			sem <- struct{}{}
			defer func() { <-sem }()
			ch <- res{sc, runScenario(t, node, cli, preload, url, sc)}
		}(sc)
	}
	out := map[string]ScenarioResult{}
	for range scenarios {
		r := <-ch
		out[r.sc] = r.r
	}
	return out
}
