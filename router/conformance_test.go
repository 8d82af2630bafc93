package router_test

import (
	"testing"

	"github.com/tasksbridge/tasksbridge/interop/peers"
	"github.com/tasksbridge/tasksbridge/router"
)

// mcpgoScenarios are the conformance tasks-* scenarios whose fixture tools
// the mcp-go fixture server has (greet, slow_compute, failing_job,
// protocol_error_job): mcp-go v1.2.1 has no input_required, so the scenarios
// that elicit (confirm_delete, multi_input, test_tool_with_task) cannot run
// against it.
var mcpgoScenarios = []string{
	"tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields", "tasks-request-state-removal",
	"tasks-request-headers", "tasks-status-notifications", "tasks-required-task-error",
}

// The conformance suite's task scenarios through the whole bridge in front of
// the real mcp-go v1.2.1 server with automatic era detection. mcp-go answers
// server/discover naming 2026-07-28 but keeps the 2025-11-25 tasks
// capability and shapes: the probe must read its tasks as legacy, so modern
// clients get the modern face, not passthrough (which fails these scenarios
// with "v1-style capabilities.tasks slot MUST NOT be used" and -32601
// "requires task augmentation").
func TestConformanceAutoEraMCPGo(t *testing.T) {
	if testing.Short() {
		t.Skip("conformance suite skipped in -short mode")
	}
	t.Parallel()
	peers.CheckTaskScenarios(t)
	up := peers.StartMCPGoServer(t, peers.MCPGoServerOptions{TimeScale: 0.2})
	br := startBridge(t, router.Config{Upstream: up.URL, UpstreamEra: "auto"})
	results := peers.RunScenarios(t, br.url, mcpgoScenarios)
	for _, sc := range mcpgoScenarios {
		if r := results[sc]; !r.OK {
			t.Errorf("%s failed through the bridge in front of mcp-go v1.2.1:\n%s", sc, r.Report)
		} else {
			t.Logf("%s: pass (%d checks)", sc, r.Checks)
		}
	}
}
