package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Steps of the TypeScript legacy client (interop/ts/legacy-client.mjs, plus iserror
// and sample); the mcp-go client knows MCPGoSteps.
var (
	TSSteps    = []string{"init", "list", "task", "stream", "plain", "tasklist", "cancel", "fail", "iserror", "elicit", "sample"}
	MCPGoSteps = []string{"init", "list", "task", "plain", "tasklist", "cancel", "fail"}
)

// Report is the JSON report both legacy clients print.
type Report struct {
	Client string `json:"client"`
	URL    string `json:"url"`
	OK     bool   `json:"ok"`
	Steps  []Step `json:"steps"`
	Error  string `json:"error,omitempty"`
	// SideRequests are the server→client requests the TS client saw, with
	// the method of the request whose response stream carried each ("on").
	SideRequests []SideRequest `json:"sideRequests,omitempty"`
	// StatusNotifications counts notifications/tasks/status (TS client).
	StatusNotifications int `json:"statusNotifications,omitempty"`

	// Stderr is the client's stderr and ExitCode its exit code (not JSON).
	Stderr   string `json:"-"`
	ExitCode int    `json:"-"`
	// Raw is the report line as printed.
	Raw string `json:"-"`
}

// Step is one step's outcome. Details vary per step (see the client sources);
// for example fail has "shape" ("error" or "iserror"), cancel has
// "secondCancel" {"code","message"}, elicit and sample have "deliveredOn".
type Step struct {
	Name    string         `json:"name"`
	OK      bool           `json:"ok"`
	Ms      int64          `json:"ms"`
	Error   string         `json:"error,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

// SideRequest is a server→client request observed by the TS client.
type SideRequest struct {
	Method        string `json:"method"`
	On            string `json:"on"`
	RelatedTaskID string `json:"relatedTaskId"`
}

// Step returns the named step, or nil.
func (r *Report) Step(name string) *Step {
	for i := range r.Steps {
		if r.Steps[i].Name == name {
			return &r.Steps[i]
		}
	}
	return nil
}

// Require fails the test unless every step passed, listing each failure with
// its details and the client's stderr.
func (r *Report) Require(t testing.TB) {
	t.Helper()
	if r.OK {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s against %s failed (exit %d)", r.Client, r.URL, r.ExitCode)
	if r.Error != "" {
		fmt.Fprintf(&b, ": %s", r.Error)
	}
	for _, s := range r.Steps {
		if !s.OK {
			d, _ := json.Marshal(s.Details)
			fmt.Fprintf(&b, "\n  step %s: %s\n    details: %s", s.Name, s.Error, d)
		}
	}
	if r.Stderr != "" {
		fmt.Fprintf(&b, "\nstderr:\n%s", r.Stderr)
	}
	t.Fatal(b.String())
}

// ClientOptions configures one client run.
type ClientOptions struct {
	// Steps to run, in order; nil means all the client knows.
	Steps []string
	// Args are extra flags placed before the URL, for example
	// {"--iserror-tool", "fail_task"} (TS) or {"-fail-tool", "x"} (mcp-go).
	Args []string
	// Timeout is the client's overall timeout (default 60s); the process is
	// killed 15s after it.
	Timeout time.Duration
	// Env adds environment variables (KEY=VALUE).
	Env []string
}

func (o *ClientOptions) defaults(all []string) {
	if o.Steps == nil {
		o.Steps = all
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
}

// RunTSClient runs interop/ts/legacy-client.mjs (TypeScript SDK 1.32.2,
// client.experimental.tasks) against url and returns its report. It fails the
// test only when the client produced no report; check Report.OK or call
// Require.
func RunTSClient(t testing.TB, url string, o ClientOptions) *Report {
	t.Helper()
	o.defaults(TSSteps)
	node := Node(t)
	args := []string{TSScript(t, "legacy-client.mjs"), "--steps", strings.Join(o.Steps, ","),
		"--timeout-ms", strconv.FormatInt(o.Timeout.Milliseconds(), 10)}
	args = append(append(args, o.Args...), url)
	cmd := exec.Command(node, args...)
	cmd.Dir = filepath.Join(Dir(t), "ts")
	cmd.Env = append(cmd.Environ(), o.Env...)
	return runClient(t, cmd, o.Timeout)
}

// RunMCPGoClient runs interop/bin/mcpgo-client (mcp-go v1.2.1 legacy task
// client) against url and returns its report, like RunTSClient.
func RunMCPGoClient(t testing.TB, url string, o ClientOptions) *Report {
	t.Helper()
	o.defaults(MCPGoSteps)
	args := []string{"-steps", strings.Join(o.Steps, ","), "-timeout", o.Timeout.String()}
	args = append(append(args, o.Args...), url)
	cmd := exec.Command(MCPGoBinary(t, "client"), args...)
	cmd.Env = append(cmd.Environ(), o.Env...)
	return runClient(t, cmd, o.Timeout)
}

func runClient(t testing.TB, cmd *exec.Cmd, timeout time.Duration) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+15*time.Second)
	defer cancel()
	stdout, stderr, err := runOnce(ctx, cmd)
	exit := -1
	if cmd.ProcessState != nil {
		exit = cmd.ProcessState.ExitCode()
	}
	rep, perr := ParseReport(stdout)
	if perr != nil {
		t.Fatalf("%s: no report (%v; run error: %v)\nstdout:\n%s\nstderr:\n%s", cmd.Args[0], perr, err, stdout, stderr)
	}
	rep.Stderr, rep.ExitCode = stderr, exit
	if rep.OK != (exit == 0) {
		t.Errorf("%s: report ok=%v but exit code %d", rep.Client, rep.OK, exit)
	}
	return rep
}

// ParseReport decodes the last non-empty line of a client's stdout.
func ParseReport(stdout string) (*Report, error) {
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return nil, fmt.Errorf("empty output")
	}
	var r Report
	if err := json.Unmarshal([]byte(last), &r); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	if r.Client == "" || r.Steps == nil {
		return nil, fmt.Errorf("not a client report: %.200s", last)
	}
	r.Raw = last
	return &r, nil
}
