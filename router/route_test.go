package router_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// TestFourPathsOnOneListener drives all four client/upstream era
// combinations: for each upstream era one bridge listener
// serves a legacy and a modern client, and what each gets shows which path
// served it.
func TestFourPathsOnOneListener(t *testing.T) {
	t.Run("modern-upstream", func(t *testing.T) {
		ctx := ctxT(t)
		br := startBridge(t, router.Config{Upstream: startModern(t)})

		// legacy → modern: the legacy face answers initialize itself from
		// the upstream's discover plus the emulated legacy tasks capability,
		// and emulates tasks/result.
		lc := newLegacyClient(t, br.url, "legacy-app")
		init := lc.initialize(ctx)
		mustOK(t, "initialize", init)
		if field(t, init.Result, "capabilities.tasks.requests") == "" {
			t.Errorf("legacy→modern: no emulated tasks capability: %s", init.Result)
		}
		created := mustOK(t, "tools/call task", lc.call(ctx, "tools/call", map[string]any{
			"name": "slow_task", "arguments": map[string]any{"ms": 10, "text": "legacy done"}, "task": map[string]any{}}))
		id := field(t, created, "task.taskId")
		res := mustOK(t, "tasks/result", lc.call(ctx, "tasks/result", map[string]any{"taskId": id}))
		if !strings.Contains(string(res), "legacy done") {
			t.Errorf("tasks/result %s", res)
		}

		// modern → modern: passed through; the upstream's own serverInfo.
		mc := newModernClient(t, br.url, "modern-app")
		d := mustOK(t, "server/discover", mc.call(ctx, "server/discover", nil))
		if !strings.Contains(string(d), `"tasksbridge-demo"`) {
			t.Errorf("modern→modern discover not from the upstream: %s", d)
		}
		ct := mustOK(t, "tools/call", mc.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 10, "text": "modern done"}}))
		if field(t, ct, "resultType") != "task" {
			t.Fatalf("modern→modern tools/call: %s", ct)
		}
		g := mustOK(t, "tasks/get", mc.call(ctx, "tasks/get", map[string]any{"taskId": field(t, ct, "taskId")}))
		if field(t, g, "taskId") != field(t, ct, "taskId") {
			t.Errorf("tasks/get %s", g)
		}
		directions(t, br, map[string]float64{"legacy_to_modern": 1, "modern_to_modern": 1})
	})

	t.Run("legacy-upstream", func(t *testing.T) {
		ctx := ctxT(t)
		up, _ := startLegacy(t)
		br := startBridge(t, router.Config{Upstream: up})

		// legacy → legacy: passed through; the fixture's serverInfo and its
		// own session id.
		lc := newLegacyClient(t, br.url, "legacy-app")
		init := lc.initialize(ctx)
		mustOK(t, "initialize", init)
		if got := field(t, init.Result, "serverInfo.name"); got != "tasksbridge-legacy-fixture" {
			t.Errorf("legacy→legacy initialize served by %q, want the upstream", got)
		}
		created := mustOK(t, "tools/call task", lc.call(ctx, "tools/call", map[string]any{
			"name": "slow_task", "arguments": map[string]any{"ms": 10, "text": "legacy done"}, "task": map[string]any{}}))
		res := mustOK(t, "tasks/result", lc.call(ctx, "tasks/result", map[string]any{"taskId": field(t, created, "task.taskId")}))
		if !strings.Contains(string(res), "legacy done") {
			t.Errorf("tasks/result %s", res)
		}
		// The upstream elicits on the blocking tasks/result stream: the
		// passthrough must stream that request unbuffered, and carry the
		// client's answer (a POST on the same Mcp-Session-Id) back.
		asking := mustOK(t, "tools/call confirm_delete", lc.call(ctx, "tools/call", map[string]any{
			"name": "confirm_delete", "arguments": map[string]any{"filename": "a.txt"}, "task": map[string]any{}}))
		lc.onRequest = func(method string, params json.RawMessage) (any, *rpc.Error) {
			return map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}, nil
		}
		r := lc.call(ctx, "tasks/result", map[string]any{"taskId": field(t, asking, "task.taskId")})
		if res := mustOK(t, "tasks/result with elicitation", r); !strings.Contains(string(res), "Deleted a.txt") || len(r.Requests) != 1 {
			t.Errorf("tasks/result %s after %v", res, r.Requests)
		}
		fams := families(t, scrape(t, br.base+"/metrics"))
		if n, _ := sample(fams, "tasksbridge_input_requests_total", "method", "elicitation/create", "outcome", "ok"); n != 1 {
			t.Errorf("passed-through elicitation counted %v, want 1", n)
		}
		if n, _ := sample(fams, "tasksbridge_task_result_wait_seconds"); n != 2 {
			t.Errorf("passed-through tasks/result waits %v, want 2", n)
		}

		// modern → legacy: the modern face: discover built from the
		// upstream's initialize, tasks through the extension.
		mc := newModernClient(t, br.url, "modern-app")
		d := mustOK(t, "server/discover", mc.call(ctx, "server/discover", nil))
		var disc struct {
			SupportedVersions []string                   `json:"supportedVersions"`
			Capabilities      map[string]json.RawMessage `json:"capabilities"`
		}
		_ = json.Unmarshal(d, &disc)
		if !strings.Contains(string(disc.Capabilities["extensions"]), "io.modelcontextprotocol/tasks") {
			t.Errorf("modern→legacy discover lacks the tasks extension: %s", d)
		}
		ct := mustOK(t, "tools/call", mc.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 10, "text": "modern done"}}))
		if field(t, ct, "resultType") != "task" {
			t.Fatalf("modern→legacy tools/call: %s", ct)
		}
		if r := mc.call(ctx, "tasks/result", map[string]any{"taskId": field(t, ct, "taskId")}); r.Err == nil || r.Err.Code != -32601 || r.Status != http.StatusNotFound {
			t.Errorf("modern tasks/result: %v, want 404 -32601", r)
		}
		directions(t, br, map[string]float64{"legacy_to_legacy": 2, "modern_to_legacy": 1})
	})
}

// directions checks tasksbridge_tasks_created_total{direction, origin="upstream"}
// and that requests were counted under each path's era pair.
func directions(t *testing.T, br *bridgeEnv, want map[string]float64) {
	t.Helper()
	fams := families(t, scrape(t, br.base+"/metrics"))
	for dir, n := range want {
		if got, _ := sample(fams, "tasksbridge_tasks_created_total", "direction", dir, "origin", "upstream"); got != n {
			t.Errorf("tasks created %s = %v, want %v", dir, got, n)
		}
		clientEra, upEra, _ := strings.Cut(dir, "_to_")
		if got, _ := sample(fams, "tasksbridge_requests_total", "client_era", clientEra, "upstream_era", upEra, "method", "tools/call", "outcome", "ok"); got != n {
			t.Errorf("tools/call on the %s path counted %v, want %v", dir, got, n)
		}
	}
}
