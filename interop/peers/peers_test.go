package peers_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// Direct baseline cross-checks without the bridge: they
// prove the peers themselves work, so a failing bridge interop test points at
// the bridge.

func detail(t *testing.T, r *peers.Report, step, key string) any {
	t.Helper()
	s := r.Step(step)
	if s == nil {
		t.Fatalf("report has no step %q", step)
	}
	return s.Details[key]
}

func code(t *testing.T, v any) float64 {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("want an error object, got %#v", v)
	}
	c, _ := m["code"].(float64)
	return c
}

// TS SDK 1.32.2 client → TS SDK 1.32.2 fixture server: every step, including
// the elicitation and sampling answered on the tasks/result stream.
func TestBaselineTSClientTSServer(t *testing.T) {
	t.Parallel()
	srv := peers.StartTSServer(t, peers.TSServerOptions{})
	rep := peers.RunTSClient(t, srv.URL, peers.ClientOptions{Args: []string{
		"--task-args", `{"ms":200,"text":"task step"}`,
		"--stream-args", `{"ms":200,"text":"stream step"}`,
		"--plain-args", `{"ms":100,"text":"plain step"}`,
		"--fail-args", `{"ms":50,"reason":"fail step"}`,
		// The TS fixture's failing tool stores an isError result (no error_task).
		"--iserror-tool", "fail_task", "--iserror-args", `{"ms":50,"reason":"iserror step"}`,
		"--expect-fail", "iserror",
	}})
	rep.Require(t)
	if got := detail(t, rep, "fail", "shape"); got != "iserror" {
		t.Errorf("fail shape = %v, want iserror (TS SDK stores {isError:true})", got)
	}
	if got := code(t, detail(t, rep, "cancel", "secondCancel")); got != -32602 {
		t.Errorf("second cancel code = %v, want -32602", got)
	}
	for _, step := range []string{"elicit", "sample"} {
		on, _ := detail(t, rep, step, "deliveredOn").([]any)
		if len(on) != 1 || on[0] != "tasks/result" {
			t.Errorf("%s side request delivered on %v, want [tasks/result]", step, on)
		}
	}
	for _, sr := range rep.SideRequests {
		if sr.On != "tasks/result" || sr.RelatedTaskID == "" {
			t.Errorf("side request %+v: want it on tasks/result with related-task _meta", sr)
		}
	}
}

// mcp-go v1.2.1 client → mcp-go v1.2.1 fixture server.
func TestBaselineMCPGoClientMCPGoServer(t *testing.T) {
	t.Parallel()
	srv := peers.StartMCPGoServer(t, peers.MCPGoServerOptions{})
	rep := peers.RunMCPGoClient(t, srv.URL, peers.ClientOptions{Args: []string{"-expect-fail", "error"}})
	rep.Require(t)
	// mcp-go answers tasks/result of a failed task with JSON-RPC -32603.
	if got := code(t, detail(t, rep, "fail", "error")); got != -32603 {
		t.Errorf("fail error code = %v, want -32603", got)
	}
	if got := code(t, detail(t, rep, "cancel", "secondCancel")); got != -32602 {
		t.Errorf("second cancel code = %v, want -32602", got)
	}
}

// TS SDK client → mcp-go server: every step but those needing input_required
// (mcp-go has none) or an isError task result.
func TestBaselineTSClientMCPGoServer(t *testing.T) {
	t.Parallel()
	srv := peers.StartMCPGoServer(t, peers.MCPGoServerOptions{})
	rep := peers.RunTSClient(t, srv.URL, peers.ClientOptions{
		Steps: []string{"init", "list", "task", "stream", "plain", "tasklist", "cancel", "fail"},
		Args: []string{
			// mcp-go sends no pollInterval; the SDK would wait 1 s per poll.
			"--default-poll-ms", "50",
			"--task-tool", "slow_required", "--task-args", `{"ms":200,"text":"task step"}`,
			"--stream-tool", "slow_required", "--stream-args", `{"ms":200,"text":"stream step"}`,
			"--plain-args", `{"ms":100,"text":"plain step"}`,
			"--cancel-tool", "slow_required",
			"--fail-args", `{"ms":50,"reason":"fail step"}`,
			"--expect-fail", "error",
		},
	})
	rep.Require(t)
	if got := code(t, detail(t, rep, "fail", "error")); got != -32603 {
		t.Errorf("fail error code = %v, want -32603", got)
	}
}

// mcp-go client → TS SDK server.
func TestBaselineMCPGoClientTSServer(t *testing.T) {
	t.Parallel()
	srv := peers.StartTSServer(t, peers.TSServerOptions{})
	rep := peers.RunMCPGoClient(t, srv.URL, peers.ClientOptions{Args: []string{
		"-fail-args", `{"ms":50,"reason":"fail step"}`,
		"-expect-fail", "iserror",
	}})
	rep.Require(t)
}

// A client run that fails reports which step failed and exits non-zero.
func TestClientReportsFailure(t *testing.T) {
	t.Parallel()
	srv := peers.StartMCPGoServer(t, peers.MCPGoServerOptions{})
	rep := peers.RunTSClient(t, srv.URL, peers.ClientOptions{
		Steps: []string{"init", "list", "task"},
		Args:  []string{"--task-tool", "no_such_tool"},
	})
	if rep.OK || rep.ExitCode != 1 {
		t.Fatalf("report ok=%v exit=%d, want a failure", rep.OK, rep.ExitCode)
	}
	if s := rep.Step("list"); s == nil || s.OK || !strings.Contains(s.Error, "no_such_tool") {
		t.Fatalf("list step = %+v, want a failure naming no_such_tool", s)
	}
	if s := rep.Step("task"); s == nil || s.OK {
		t.Fatalf("task step = %+v, want a failure", s)
	}
	if s := rep.Step("init"); s == nil || !s.OK {
		t.Fatalf("init step = %+v, want ok", s)
	}
}

// The loopback preload moves host-less listen() calls to 127.0.0.1;
// the conformance harness depends on it.
func TestLoopbackPreload(t *testing.T) {
	t.Parallel()
	node := peers.Node(t)
	script := `const s=require('http').createServer();` +
		`s.listen(0,()=>{console.log(s.address().address);s.close()})`
	out, err := exec.Command(node, "-r", peers.LoopbackPreload(t), "-e", script).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "127.0.0.1" {
		t.Fatalf("listen(0) bound %q, want 127.0.0.1", got)
	}
}

// The Node 22 that the conformance harness needs is installed and runs it.
func TestConformanceHarnessLists(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(peers.Node22(t), peers.ConformanceCLI(t), "list").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	for _, sc := range []string{"tasks-lifecycle", "tasks-mrtr-input", "tasks-required-task-error"} {
		if !strings.Contains(string(out), sc) {
			t.Errorf("scenario list lacks %s", sc)
		}
	}
}

func TestParseReport(t *testing.T) {
	t.Parallel()
	r, err := peers.ParseReport("noise\n" + `{"client":"c","url":"u","ok":false,"steps":[{"name":"init","ok":false,"ms":1,"error":"x"}]}` + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || r.Step("init") == nil || r.Step("init").Error != "x" || r.Step("list") != nil {
		t.Fatalf("parsed %+v", r)
	}
	for _, bad := range []string{"", "not json", `{"ok":true}`} {
		if _, err := peers.ParseReport(bad); err == nil {
			t.Errorf("ParseReport(%q) succeeded", bad)
		}
	}
}

func TestStrict(t *testing.T) {
	for _, tc := range []struct {
		ci, interop string
		want        bool
	}{
		{"", "", false}, {"true", "", true}, {"1", "", true}, {"false", "", false}, {"0", "", false},
		{"", "1", true}, {"", "0", false},
	} {
		t.Setenv("CI", tc.ci)
		t.Setenv("TASKSBRIDGE_INTEROP", tc.interop)
		if got := peers.Strict(); got != tc.want {
			t.Errorf("CI=%q TASKSBRIDGE_INTEROP=%q: Strict() = %v, want %v", tc.ci, tc.interop, got, tc.want)
		}
	}
}
