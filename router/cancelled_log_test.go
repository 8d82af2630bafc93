package router_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// The "Task was cancelled" answer to tasks/result of a cancelled task
// (L-41) is what the client asked for, not a failure: the operator's log
// has no WARN line for it (it was one, "see the bridge's warnings around
// it", with no such warnings anywhere), and no line at all refers to
// warnings.
func TestCancelledTaskResultIsNotAFailure(t *testing.T) {
	ctx := ctxT(t)
	var log syncBuffer
	br := startBridge(t, router.Config{Upstream: startModern(t), UpstreamEra: "modern",
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	lc := newLegacyClient(t, br.url, "legacy-app")
	mustOK(t, "initialize", lc.initialize(ctx))
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if err := json.Unmarshal(mustOK(t, "tools/call", lc.call(ctx, "tools/call", map[string]any{
		"name": "slow_task", "arguments": map[string]any{"ms": 3600000, "text": "x"}, "task": map[string]any{}})), &created); err != nil || created.Task.TaskID == "" {
		t.Fatalf("CreateTaskResult: %v", err)
	}
	id := created.Task.TaskID
	mustOK(t, "tasks/cancel", lc.call(ctx, "tasks/cancel", map[string]any{"taskId": id}))
	r := lc.call(ctx, "tasks/result", map[string]any{"taskId": id})
	if r.Err == nil || r.Err.Code != rpc.CodeInternalError || !strings.HasPrefix(r.Err.Message, "Task was cancelled") {
		t.Fatalf("tasks/result of a cancelled task: %v", r)
	}
	mustOK(t, "tasks/get", lc.call(ctx, "tasks/get", map[string]any{"taskId": id})) // a later request: the result's line is written
	out := log.String()
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "tasks/result") {
			t.Errorf("the expected cancellation is logged as a failure: %s", line)
		}
		if strings.Contains(line, "warnings") {
			t.Errorf("a log line refers to warnings: %s", line)
		}
	}
}
