package translate

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Edge cases the transcripts do not show well: bounds, round trips, the
// injectable clock and id source.

func TestTaskRenamesRoundTrip(t *testing.T) {
	m := modern.Task{TaskID: "t", Status: modern.StatusWorking, CreatedAt: "2026-01-01T00:00:00Z", LastUpdatedAt: "2026-01-01T00:00:00Z",
		TTLMs: modern.Int64(5), PollIntervalMs: modern.Int64(7)}
	l := TaskToLegacy(m)
	if *l.TTL != 5 || *l.PollInterval != 7 {
		t.Fatalf("renames lost values: %+v", l)
	}
	back := TaskToModern(l)
	if *back.TTLMs != 5 || *back.PollIntervalMs != 7 || back.TaskID != "t" {
		t.Fatalf("round trip: %+v", back)
	}
	m.TTLMs, m.PollIntervalMs = modern.Int64(-3), modern.Int64(-1)
	l = TaskToLegacy(m)
	if l.TTL == nil || *l.TTL != 0 || l.PollInterval != nil {
		t.Fatalf("negative ttlMs must clamp to 0 and negative pollIntervalMs drop: %+v", l)
	}
	if err := l.Validate(); err != nil {
		t.Fatalf("clamped task invalid: %v", err)
	}
}

func TestStatusMessageTruncatedOnRuneBoundary(t *testing.T) {
	long := strings.Repeat("é", maxStatusMessage) // 2 bytes each
	res, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": long}}, "isError": true})
	d := modern.DetailedTask{Task: modern.Task{TaskID: "t", Status: modern.StatusCompleted, CreatedAt: "2026-01-01T00:00:00Z", LastUpdatedAt: "2026-01-01T00:00:00Z"}, Result: res}
	lt := LegacyTaskFromDetailed(d)
	if lt.Status != legacy.StatusFailed {
		t.Fatalf("status %q, want failed (L-29)", lt.Status)
	}
	if !utf8.ValidString(lt.StatusMessage) || len(lt.StatusMessage) > maxStatusMessage+len("…") {
		t.Fatalf("statusMessage not bounded on a rune boundary: %d bytes", len(lt.StatusMessage))
	}
	// isError without any text content still explains itself (L-31).
	d.Result = json.RawMessage(`{"content":[],"isError":true}`)
	if got := LegacyTaskFromDetailed(d).StatusMessage; got != "Tool execution failed" {
		t.Fatalf("statusMessage = %q", got)
	}
}

func TestClampTTL(t *testing.T) {
	for _, c := range []struct {
		req  *int64
		max  int64
		want *int64
	}{
		{nil, 0, nil},
		{nil, 100, modern.Int64(100)},
		{modern.Int64(50), 100, modern.Int64(50)},
		{modern.Int64(500), 100, modern.Int64(100)},
		{modern.Int64(-5), 100, modern.Int64(0)},
		{modern.Int64(-5), 0, modern.Int64(0)},
	} {
		got := clampTTL(c.req, c.max)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("clampTTL(%v, %d) = %v, want %v", c.req, c.max, got, c.want)
		}
	}
}

func TestInjectedClockAndIDs(t *testing.T) {
	at := time.Date(2026, 9, 1, 12, 0, 0, 123e6, time.UTC)
	d := DecideLegacyCancel(legacy.Task{TaskID: "t", Status: legacy.StatusWorking, CreatedAt: "2026-09-01T11:00:00Z", LastUpdatedAt: "2026-09-01T11:00:00Z"}, FixedClock(at))
	if d.Task.LastUpdatedAt != "2026-09-01T12:00:00.123Z" {
		t.Fatalf("lastUpdatedAt %q does not come from the injected clock", d.Task.LastUpdatedAt)
	}
	c := &Counter{Prefix: "x"}
	if a, b := c.NewID(), c.NewID(); a != "x1" || b != "x2" {
		t.Fatalf("counter ids %q %q", a, b)
	}
	if got := IDFunc(func() string { return "k" }).NewID(); got != "k" {
		t.Fatalf("IDFunc = %q", got)
	}
	if SystemClock.Now().IsZero() {
		t.Fatal("system clock returned zero time")
	}
}

func TestMergeModernStatusTerminalSticks(t *testing.T) {
	if got := MergeModernStatus(modern.StatusCompleted, modern.StatusWorking); got != modern.StatusCompleted {
		t.Fatalf("terminal regressed to %q", got)
	}
	if got := MergeModernStatus(modern.StatusWorking, modern.StatusInputRequired); got != modern.StatusInputRequired {
		t.Fatalf("working did not follow upstream: %q", got)
	}
}

func TestEnumStrings(t *testing.T) {
	for v, want := range map[interface{ String() string }]string{
		CancelReject: "reject", CancelPin: "pin", CancelAction(0): "invalid",
		ResultReady: "ready", ResultError: "error", ResultWait: "wait", ResultKind(0): "invalid",
		CallComplete: "complete", CallTask: "task", CallInputRequired: "input_required", CallKind(0): "invalid",
	} {
		if v.String() != want {
			t.Errorf("%#v.String() = %q, want %q", v, v.String(), want)
		}
	}
}

func TestDetailedTaskFromLegacyNeedsPayload(t *testing.T) {
	raw := []byte(`{"taskId":"L","status":"completed","createdAt":"2025-11-25T10:00:00Z","lastUpdatedAt":"2025-11-25T10:00:00Z","ttl":null}`)
	if !NeedsPayload(legacy.StatusCompleted) || NeedsPayload(legacy.StatusWorking) {
		t.Fatal("NeedsPayload wrong")
	}
	_, err := DetailedTaskFromLegacy(raw, nil, nil)
	if rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Fatalf("terminal task without payload: got %v, want -32603 asking to fetch it", err)
	}
}

func TestTasksResultOutcomeRejectsBrokenSnapshots(t *testing.T) {
	base := modern.Task{TaskID: "t", CreatedAt: "2026-01-01T00:00:00Z", LastUpdatedAt: "2026-01-01T00:00:00Z"}
	for _, d := range []modern.DetailedTask{
		{Task: withStatus(base, "bogus")},
		{Task: withStatus(base, modern.StatusCompleted)}, // no result
	} {
		if _, err := TasksResultOutcome(d, false, nil); rpc.CodeOf(err) != rpc.CodeInternalError {
			t.Errorf("%+v: got %v, want -32603", d, err)
		}
	}
	// failed without an error still answers with a JSON-RPC error.
	o, err := TasksResultOutcome(modern.DetailedTask{Task: withStatus(base, modern.StatusFailed)}, false, nil)
	if err != nil || o.Kind != ResultError || o.Error.Code != rpc.CodeInternalError {
		t.Fatalf("failed without error: %+v %v", o, err)
	}
}

func withStatus(t modern.Task, s modern.TaskStatus) modern.Task { t.Status = s; return t }

func TestTaskNotificationNeedsSubscriptionID(t *testing.T) {
	d := modern.DetailedTask{Task: modern.Task{TaskID: "t", Status: modern.StatusWorking, CreatedAt: "2026-01-01T00:00:00Z", LastUpdatedAt: "2026-01-01T00:00:00Z"}}
	var zero = mustID(nil)
	if _, err := TaskNotificationToModern(d, zero); rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Fatalf("missing subscriptionId accepted: %v", err)
	}
}

// CheckInputCapability is the one place both faces ask "may this client be
// asked this?" (L-82, M-48).
func TestCheckInputCapability(t *testing.T) {
	obj := func(s string) *modern.Object {
		o := modern.Object{}
		if s != "" {
			o[s] = json.RawMessage(`{}`)
		}
		return &o
	}
	elicit := func(params string) modern.InputRequest {
		return modern.InputRequest{Method: "elicitation/create", Params: json.RawMessage(params)}
	}
	for _, c := range []struct {
		name string
		req  modern.InputRequest
		caps modern.ClientCapabilities
		ok   bool
	}{
		{"empty elicitation object = form", elicit(`{"message":"m","requestedSchema":{}}`), modern.ClientCapabilities{Elicitation: obj("")}, true},
		{"form not declared", elicit(`{"mode":"form","message":"m","requestedSchema":{}}`), modern.ClientCapabilities{Elicitation: obj("url")}, false},
		{"url declared", elicit(`{"mode":"url","message":"m","url":"https://x"}`), modern.ClientCapabilities{Elicitation: obj("url")}, true},
		{"url not declared", elicit(`{"mode":"url","message":"m","url":"https://x"}`), modern.ClientCapabilities{Elicitation: obj("")}, false},
		{"unknown mode", elicit(`{"mode":"hologram","message":"m"}`), modern.ClientCapabilities{Elicitation: obj("form")}, false},
		{"no elicitation at all", elicit(`{"message":"m","requestedSchema":{}}`), modern.ClientCapabilities{}, false},
		{"sampling", modern.InputRequest{Method: "sampling/createMessage", Params: json.RawMessage(`{}`)}, modern.ClientCapabilities{Sampling: obj("")}, true},
		{"sampling not declared", modern.InputRequest{Method: "sampling/createMessage", Params: json.RawMessage(`{}`)}, modern.ClientCapabilities{Roots: obj("")}, false},
		{"roots", modern.InputRequest{Method: "roots/list"}, modern.ClientCapabilities{Roots: obj("")}, true},
		{"roots not declared", modern.InputRequest{Method: "roots/list"}, modern.ClientCapabilities{Sampling: obj("")}, false},
		{"unknown method", modern.InputRequest{Method: "ping"}, modern.ClientCapabilities{Sampling: obj(""), Roots: obj(""), Elicitation: obj("")}, false},
	} {
		err := CheckInputCapability("k", c.req, c.caps)
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && rpc.CodeOf(err) != rpc.CodeInvalidParams {
			t.Errorf("%s: code %d, want -32602", c.name, rpc.CodeOf(err))
		}
	}
}

// timestamp keeps RFC 3339 values byte for byte and rewrites every other
// spelling legacy.ParseTime reads into RFC 3339 UTC of the same instant.
func TestTimestampPassing(t *testing.T) {
	for _, s := range []string{"2026-09-01T10:00:00Z", "2026-09-01T10:00:00.123456789+05:30", "2026-09-01T10:00:00.000Z", "2026-09-01T10:00:00-00:00"} {
		if got := timestamp(s); got != s {
			t.Errorf("timestamp(%q) = %q, want it verbatim", s, got)
		}
	}
	for in, want := range map[string]string{
		"2026-09-01 10:00:00":         "2026-09-01T10:00:00.000Z",
		"2026-09-01t10:00:00z":        "2026-09-01T10:00:00.000Z",
		"2026-09-01T10:00:00.5+0200":  "2026-09-01T08:00:00.500Z",
		"2026-09-01T10:00:00,000001Z": "2026-09-01T10:00:00.000001Z",
		"2026-09-01T10:00Z":           "2026-09-01T10:00:00.000Z",
		"2026-09-01":                  "2026-09-01T00:00:00.000Z",
		" 2026-09-01T10:00:00.250Z ":  "2026-09-01T10:00:00.250Z",
		"not a time":                  "not a time",
		"":                            "",
	} {
		got := timestamp(in)
		if got != want {
			t.Errorf("timestamp(%q) = %q, want %q", in, got, want)
			continue
		}
		if want != in {
			a, _ := legacy.ParseTime(in)
			b, err := time.Parse(time.RFC3339Nano, got)
			if err != nil || !a.Equal(b) {
				t.Errorf("timestamp(%q) = %q is not RFC 3339 of the same instant (%v)", in, got, err)
			}
		}
	}
}
