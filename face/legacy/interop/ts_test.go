package interop_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// tsArgs are the TypeScript client's flags for a bridge in front of the
// embedded upstream: its default tools already are the demo's; fail_task
// ends with a JSON-RPC error, so the fail step must see that shape.
func tsArgs() []string {
	return []string{
		"--expect-fail", "error",
		// The bridge advertises pollInterval; this only guards against a
		// task without one making the SDK wait its 1 s default.
		"--default-poll-ms", "50",
	}
}

// TestTSClientAllSteps runs the official TypeScript SDK 1.32.2 legacy client
// (client.experimental.tasks) through every step against the legacy face in
// front of the embedded modern upstream, and checks the report, what the
// bridge put on the wire (official 2025-11-25 schema) and what it sent
// upstream.
func TestTSClientAllSteps(t *testing.T) {
	t.Parallel()
	e := startBridge(t)
	rep := peers.RunTSClient(t, e.url, peers.ClientOptions{Args: tsArgs(), Timeout: clientTimeout})
	checkTSReport(t, rep)

	// The wire, seen from the bridge's side: every message schema-valid, and
	// the two side-channel requests went out once each, on the stream of
	// the blocking tasks/result, tagged with their task (L-33, L-46, L-47).
	side := checkWire(t, e.tap.all())
	want := map[string]string{
		"elicitation/create":     str(step(t, rep, "elicit").Details["taskId"]),
		"sampling/createMessage": str(step(t, rep, "sample").Details["taskId"]),
	}
	if len(side) != len(want) {
		t.Errorf("bridge sent %d server→client requests %+v, want one elicitation and one sampling request", len(side), side)
	}
	for _, s := range side {
		if s.On != "tasks/result" || s.RelatedTaskID == "" || s.RelatedTaskID != want[s.Method] {
			t.Errorf("side request %+v: want it on the tasks/result stream of task %q", s, want[s.Method])
		}
	}
	if e.tap.count("notifications/tasks/status") == 0 {
		t.Error("no notifications/tasks/status on the wire, though StatusNotifications is on (L-61)")
	}

	// Upstream: each answer went up exactly once in tasks/update, and the
	// removed legacy methods never did (M-34: tasks/result and tasks/list
	// are answered by the bridge).
	if n := e.up.count("tasks/update"); n != 2 {
		t.Errorf("upstream got %d tasks/update, want 2 (the elicitation answer and the sampled message, once each)", n)
	}
	for _, m := range []string{"tasks/result", "tasks/list", "initialize"} {
		if n := e.up.count(m); n != 0 {
			t.Errorf("upstream got %d %s requests, want none (legacy-only method)", n, m)
		}
	}
	if e.up.count("tools/call") == 0 || e.up.count("tasks/cancel") != 1 {
		t.Errorf("upstream tools/call %d, tasks/cancel %d: want calls and exactly one cancel",
			e.up.count("tools/call"), e.up.count("tasks/cancel"))
	}
}

// checkTSReport asserts every step of the TypeScript client passed, and the
// specifics its report records.
func checkTSReport(t *testing.T, rep *peers.Report) {
	t.Helper()
	rep.Require(t)
	if len(rep.Steps) != len(peers.TSSteps) {
		t.Fatalf("report has %d steps, want all %d: %s", len(rep.Steps), len(peers.TSSteps), rep.Raw)
	}
	checkInitTasksCapability(t, rep)

	ts := obj(step(t, rep, "list").Details["taskSupport"])
	for _, tool := range []string{"slow_task", "fail_task", "error_task", "elicit_task", "sample_task"} {
		if s := str(ts[tool]); s != "optional" && s != "required" {
			t.Errorf("list: %s has execution.taskSupport %q, want optional or required", tool, s)
		}
	}

	// task: create → poll → result (L-12, L-17, L-22, L-34).
	d := step(t, rep, "task").Details
	created := obj(d["created"])
	if str(created["status"]) != "working" || created["createdAt"] == nil || created["lastUpdatedAt"] == nil {
		t.Errorf("task: CreateTaskResult task %v, want status working with createdAt and lastUpdatedAt (L-17..L-19)", created)
	}
	if got := lastString(d["statuses"]); got != "completed" {
		t.Errorf("task: statuses %v end %q, want completed", d["statuses"], got)
	}
	if got := num(d["pollInterval"]); got != float64(pollInterval.Milliseconds()) {
		t.Errorf("task: pollInterval %v, want the upstream's %d ms", d["pollInterval"], pollInterval.Milliseconds())
	}
	if str(d["text"]) != "task step" {
		t.Errorf("task: result text %q, want %q", str(d["text"]), "task step")
	}

	// stream: callToolStream yields taskCreated … the result.
	d = step(t, rep, "stream").Details
	msgs := strs(d["messages"])
	if len(msgs) < 2 || msgs[0] != "taskCreated" || msgs[len(msgs)-1] != "result" || !slices.Contains(msgs, "taskStatus:completed") {
		t.Errorf("stream: callToolStream yielded %v, want taskCreated … taskStatus:completed … result", msgs)
	}
	if str(d["text"]) != "stream step" {
		t.Errorf("stream: result text %q", str(d["text"]))
	}

	// plain: no task in, final result out (the bridge polls internally).
	if got := str(step(t, rep, "plain").Details["text"]); got != "plain step" {
		t.Errorf("plain: text %q, want %q", got, "plain step")
	}

	// tasklist: the tasks created so far are listed (L-52).
	d = step(t, rep, "tasklist").Details
	if num(d["created"]) != 2 || num(d["listed"]) < num(d["created"]) {
		t.Errorf("tasklist: created %v listed %v, want both created tasks listed", d["created"], d["listed"])
	}

	// cancel: cancelled at once, stays so, a second cancel is -32602, and
	// tasks/result says it was cancelled (L-55, L-58).
	checkSecondCancel(t, rep)
	d = step(t, rep, "cancel").Details
	if rac := obj(d["resultAfterCancel"]); rac == nil || rac["code"] == nil || !strings.Contains(strings.ToLower(str(rac["message"])), "cancel") {
		t.Errorf("cancel: tasks/result after cancel = %v, want a JSON-RPC error saying the task was cancelled", d["resultAfterCancel"])
	}

	checkFailAsError(t, rep)

	// iserror: an isError result makes the task failed, and tasks/result
	// returns that result (L-29, L-43).
	d = step(t, rep, "iserror").Details
	if lastString(d["statuses"]) != "failed" || str(d["text"]) != "iserror step" {
		t.Errorf("iserror: statuses %v text %q, want failed with the isError text", d["statuses"], str(d["text"]))
	}

	// elicit and sample: input_required, then the request arrives on the
	// tasks/result stream with related-task _meta, is answered, and the
	// task completes with the answer.
	for _, c := range []struct{ step, method, text string }{
		{"elicit", "elicitation/create", "legacy-client-answer"},
		{"sample", "sampling/createMessage", "sampled by the legacy client"},
	} {
		d := step(t, rep, c.step).Details
		id := str(d["taskId"])
		if !slices.Contains(list(d["statuses"]), any("input_required")) {
			t.Errorf("%s: statuses %v never showed input_required (L-27)", c.step, d["statuses"])
		}
		if on := list(d["deliveredOn"]); len(on) != 1 || on[0] != "tasks/result" {
			t.Errorf("%s: %s delivered on %v, want exactly once on tasks/result (L-46)", c.step, c.method, on)
		}
		h := list(d["handled"])
		if len(h) != 1 || str(obj(h[0])["relatedTaskId"]) != id {
			t.Errorf("%s: handled %v, want one request for task %s (L-33)", c.step, h, id)
		}
		if c.step == "elicit" && len(h) == 1 {
			if m := obj(h[0]); str(m["message"]) != "Your name?" || str(m["mode"]) != "form" || !slices.Equal(strs(m["fields"]), []string{"answer"}) {
				t.Errorf("elicit: request %v, want the form question %q with field answer", m, "Your name?")
			}
		}
		if str(d["text"]) != c.text || str(d["finalStatus"]) != "completed" {
			t.Errorf("%s: result text %q final status %q, want %q and completed", c.step, str(d["text"]), str(d["finalStatus"]), c.text)
		}
	}
	if len(rep.SideRequests) != 2 {
		t.Errorf("client saw %d server→client requests %+v, want 2", len(rep.SideRequests), rep.SideRequests)
	}
	for _, s := range rep.SideRequests {
		if s.On != "tasks/result" || s.RelatedTaskID == "" {
			t.Errorf("client saw %+v, want it on tasks/result with related-task _meta", s)
		}
	}
	if rep.StatusNotifications == 0 {
		t.Error("client got no notifications/tasks/status (L-61; the bridge sends them on the GET stream)")
	}

	// Every task is distinct (L-16).
	ids := map[string]string{}
	for _, s := range []string{"task", "stream", "cancel", "fail", "iserror", "elicit", "sample"} {
		id := str(step(t, rep, s).Details["taskId"])
		if id == "" {
			t.Errorf("%s: no taskId in the report", s)
		} else if prev, dup := ids[id]; dup {
			t.Errorf("%s and %s got the same task id (L-16)", prev, s)
		}
		ids[id] = s
	}
}

// lastString returns the last element of a decoded JSON array of strings.
func lastString(v any) string {
	l := list(v)
	if len(l) == 0 {
		return ""
	}
	return str(l[len(l)-1])
}

// strs returns a decoded JSON array's string elements.
func strs(v any) []string {
	var out []string
	for _, x := range list(v) {
		out = append(out, str(x))
	}
	return out
}
