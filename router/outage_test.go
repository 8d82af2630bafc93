package router_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/router"
)

// runBridgeOnce runs a bridge for fn, then stops it for good (as an
// operator's restart would).
func runBridgeOnce(t *testing.T, ctx context.Context, cfg router.Config, fn func(url string)) {
	t.Helper()
	cfg.Logger = quietLogger()
	s, err := router.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Mux(true))
	fn(hs.URL + "/mcp")
	_ = s.Shutdown(ctx)
	hs.CloseClientConnections()
	hs.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

var upstreamDown = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "upstream restarting", http.StatusBadGateway)
})

// A bridge restarted while its upstream is down still answers what its
// index holds: it remembers the upstream's era in the store, so tasks/get,
// tasks/result and tasks/list of stored tasks are served; only calls that
// need the upstream fail. (Before: 503 "cannot determine its protocol era"
// for every request.)
func TestStoredAnswersSurviveUpstreamOutage(t *testing.T) {
	ctx := ctxT(t)
	t.Run("legacy client, modern upstream", func(t *testing.T) {
		up := newSwitchable(t, modernHandler(t))
		dir := t.TempDir()
		lc := newLegacyClient(t, "", "legacy-app")
		var task string
		runBridgeOnce(t, ctx, router.Config{Upstream: up.url, DataDir: dir}, func(url string) {
			lc.url = url
			mustOK(t, "initialize", lc.initialize(ctx))
			created := mustOK(t, "tools/call", lc.call(ctx, "tools/call", map[string]any{
				"name": "slow_task", "arguments": map[string]any{"ms": 10, "text": "kept"}, "task": map[string]any{}}))
			task = field(t, created, "task.taskId")
			mustOK(t, "tasks/result", lc.call(ctx, "tasks/result", map[string]any{"taskId": task}))
		})
		up.set(upstreamDown)
		br := startBridge(t, router.Config{Upstream: up.url, DataDir: dir})
		lc.url = br.url
		if st := field(t, mustOK(t, "tasks/get while down", lc.call(ctx, "tasks/get", map[string]any{"taskId": task})), "status"); st != "completed" {
			t.Errorf("tasks/get while down: status %q, want completed", st)
		}
		res := mustOK(t, "tasks/result while down", lc.call(ctx, "tasks/result", map[string]any{"taskId": task}))
		if !strings.Contains(string(res), "kept") {
			t.Errorf("tasks/result while down: %s, want the stored result", res)
		}
		list := mustOK(t, "tasks/list while down", lc.call(ctx, "tasks/list", nil))
		if !strings.Contains(string(list), task) {
			t.Errorf("tasks/list while down: %s lacks %s", list, task)
		}
		r := lc.call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
		if r.Err == nil || !strings.Contains(r.Err.Message, up.url) {
			t.Errorf("tools/call while down: %v, want an error naming the upstream", r)
		}
	})
	t.Run("modern client, legacy upstream", func(t *testing.T) {
		up := newSwitchable(t, legacyHandler(t))
		dir := t.TempDir()
		mc := newModernClient(t, "", "modern-app")
		var task string
		runBridgeOnce(t, ctx, router.Config{Upstream: up.url, DataDir: dir}, func(url string) {
			mc.url = url
			created := mustOK(t, "tools/call", mc.call(ctx, "tools/call", map[string]any{
				"name": "slow_task", "arguments": map[string]any{"ms": 10, "text": "kept"}}))
			task = field(t, created, "taskId")
			for {
				d := mustOK(t, "tasks/get", mc.call(ctx, "tasks/get", map[string]any{"taskId": task}))
				if st := field(t, d, "status"); st == "completed" {
					break
				} else if st != "working" {
					t.Fatalf("tasks/get: %s", d)
				}
				select {
				case <-ctx.Done():
					t.Fatal("the task never completed")
				case <-time.After(20 * time.Millisecond): // the client's poll interval
				}
			}
		})
		up.set(upstreamDown)
		br := startBridge(t, router.Config{Upstream: up.url, DataDir: dir})
		mc.url = br.url
		d := mustOK(t, "tasks/get while down", mc.call(ctx, "tasks/get", map[string]any{"taskId": task}))
		var got struct {
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(d, &got)
		if got.Status != "completed" || !strings.Contains(string(got.Result), "kept") {
			t.Errorf("tasks/get while down: %s, want completed with the stored result", d)
		}
		r := mc.call(ctx, "tools/list", nil)
		if r.Err == nil || !strings.Contains(r.Err.Message, up.url) {
			t.Errorf("tools/list while down: %v, want an error naming the upstream", r)
		}
	})
}
