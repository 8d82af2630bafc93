package interop_test

import (
	"testing"

	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// TestMCPGoClientAllSteps runs mark3labs/mcp-go v1.2.1's legacy task client
// (initialize → tools/call with task → WaitForTask/GetTask → TaskResult →
// ListTasks → CancelTask, and a failing task) against the legacy face in
// front of the embedded modern upstream.
func TestMCPGoClientAllSteps(t *testing.T) {
	t.Parallel()
	e := startBridge(t)
	rep := peers.RunMCPGoClient(t, e.url, peers.ClientOptions{Timeout: clientTimeout, Args: []string{
		// The client's defaults name the mcp-go fixture's task-required
		// tool; the embedded upstream's task tool is slow_task.
		"-task-tool", "slow_task", "-task-args", `{"ms":300,"text":"task step"}`,
		"-cancel-tool", "slow_task", "-cancel-args", `{"ms":60000,"text":"cancel step"}`,
		"-fail-args", `{"reason":"fail step"}`,
		"-expect-fail", "error",
	}})
	rep.Require(t)
	if len(rep.Steps) != len(peers.MCPGoSteps) {
		t.Fatalf("report has %d steps, want all %d: %s", len(rep.Steps), len(peers.MCPGoSteps), rep.Raw)
	}
	checkInitTasksCapability(t, rep)

	d := step(t, rep, "task").Details
	if str(d["text"]) != "task step" {
		t.Errorf("task: TaskResult text %q, want %q", str(d["text"]), "task step")
	}
	if got := num(d["pollInterval"]); got != float64(pollInterval.Milliseconds()) {
		t.Errorf("task: pollInterval %v, want the upstream's %d ms", d["pollInterval"], pollInterval.Milliseconds())
	}
	if c := obj(d["created"]); str(c["status"]) != "working" || str(c["taskId"]) != str(d["taskId"]) {
		t.Errorf("task: CreateTaskResult task %v, want status working (L-17)", c)
	}
	if got := str(step(t, rep, "plain").Details["text"]); got != "plain step" {
		t.Errorf("plain: text %q, want %q", got, "plain step")
	}
	d = step(t, rep, "tasklist").Details
	if num(d["created"]) != 1 || num(d["listed"]) < 1 {
		t.Errorf("tasklist: created %v listed %v, want the created task listed (L-52)", d["created"], d["listed"])
	}
	checkSecondCancel(t, rep)
	if got := str(step(t, rep, "cancel").Details["statusMessage"]); got == "" {
		t.Error("cancel: the cancelled Task has no statusMessage")
	}
	checkFailAsError(t, rep)

	checkWire(t, e.tap.all())
	if n := e.up.count("tasks/cancel"); n != 1 {
		t.Errorf("upstream got %d tasks/cancel, want 1", n)
	}
	for _, m := range []string{"tasks/result", "tasks/list", "initialize"} {
		if n := e.up.count(m); n != 0 {
			t.Errorf("upstream got %d %s requests, want none (legacy-only method)", n, m)
		}
	}
}
