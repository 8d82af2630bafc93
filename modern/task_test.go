package modern

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

func TestTaskStatusHelpers(t *testing.T) {
	all := []TaskStatus{StatusWorking, StatusInputRequired, StatusCompleted, StatusFailed, StatusCancelled}
	for _, s := range all {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
		if s.IsTerminal() != (s == StatusCompleted || s == StatusFailed || s == StatusCancelled) {
			t.Errorf("%s: IsTerminal = %v", s, s.IsTerminal())
		}
		for _, n := range all {
			want := !s.IsTerminal() || s == n
			if got := s.CanTransition(n); got != want {
				t.Errorf("%s -> %s: CanTransition = %v, want %v", s, n, got, want)
			}
		}
	}
	for _, bad := range []TaskStatus{"", "submitted", "unknown", "Working"} {
		if bad.Valid() || bad.CanTransition(StatusWorking) || StatusWorking.CanTransition(bad) {
			t.Errorf("%q must be invalid and never transition", bad)
		}
	}
}

// L-21: ttlMs is always present, null meaning unlimited.
func TestTaskTTLAlwaysPresent(t *testing.T) {
	tk := baseTask(StatusWorking)
	tk.TTLMs = nil
	tk.PollIntervalMs = nil
	b := mustMarshal(t, tk)
	if !strings.Contains(string(b), `"ttlMs":null`) {
		t.Errorf("nil TTLMs must encode as null: %s", b)
	}
	if strings.Contains(string(b), "pollIntervalMs") {
		t.Errorf("nil PollIntervalMs must be omitted: %s", b)
	}
	schema(t, schemacheck.Ext, "Task", b)
	schema(t, schemacheck.Ext, "WorkingTask", b)
	got, err := DecodeTask(b)
	if err != nil || got.TTLMs != nil {
		t.Fatalf("decode: %+v %v", got, err)
	}
}

func TestTaskHelpers(t *testing.T) {
	tk := baseTask(StatusWorking)
	if d := tk.PollInterval(time.Second); d != 5*time.Second {
		t.Errorf("PollInterval = %v", d)
	}
	for _, p := range []*int64{nil, Int64(0), Int64(-5)} {
		tk.PollIntervalMs = p
		if d := tk.PollInterval(time.Second); d != time.Second {
			t.Errorf("PollInterval(%v) = %v, want default (M-24)", p, d)
		}
	}
	at, ok := tk.ExpiresAt()
	if !ok || !at.Equal(time.Date(2025, 11, 25, 10, 31, 0, 0, time.UTC)) {
		t.Errorf("ExpiresAt = %v %v (M-27)", at, ok)
	}
	tk.TTLMs = nil
	if _, ok := tk.ExpiresAt(); ok {
		t.Error("unlimited TTL has no expiry")
	}
	if s := FormatTime(time.Date(2025, 11, 25, 11, 30, 0, 5e6, time.FixedZone("x", 3600))); s != "2025-11-25T10:30:00.005Z" {
		t.Errorf("FormatTime = %s", s)
	}
	if _, err := ParseTime("yesterday"); err == nil {
		t.Error("ParseTime accepted garbage")
	}
}

func detailedVariants() map[string]DetailedTask {
	return map[string]DetailedTask{
		"WorkingTask":       {Task: baseTask(StatusWorking)},
		"InputRequiredTask": {Task: baseTask(StatusInputRequired), InputRequests: InputRequests{"name": elicitReq, "capital": samplingReq, "roots": rootsReq}},
		"CompletedTask":     {Task: baseTask(StatusCompleted), Result: json.RawMessage(`{"content":[{"type":"text","text":"Hello, Luca!"}],"isError":false}`)},
		"FailedTask":        {Task: baseTask(StatusFailed), Error: &rpc.Error{Code: -32603, Message: "API rate limit exceeded", Data: json.RawMessage(`{"retryAfter":30}`)}},
		"CancelledTask":     {Task: baseTask(StatusCancelled)},
	}
}

// Every DetailedTask variant encodes to its ext $def, as a GetTaskResult
// (resultType "complete", M-55) and round-trips.
func TestDetailedTaskVariants(t *testing.T) {
	for def, d := range detailedVariants() {
		t.Run(def, func(t *testing.T) {
			b := mustMarshal(t, d)
			schema(t, schemacheck.Ext, def, b)
			schema(t, schemacheck.Ext, "DetailedTask", b)
			back, err := DecodeDetailedTask(b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			jsonEqual(t, mustMarshal(t, back), b)

			g := GetTaskResult{DetailedTask: d}
			gb := mustMarshal(t, g)
			if !strings.HasPrefix(string(gb), `{"resultType":"complete",`) {
				t.Errorf("GetTaskResult must carry resultType complete first: %s", gb)
			}
			schema(t, schemacheck.Ext, "GetTaskResult", gb)
			gback, err := DecodeGetTaskResult(gb)
			if err != nil {
				t.Fatalf("decode GetTaskResult: %v", err)
			}
			jsonEqual(t, mustMarshal(t, gback), gb)
		})
	}
}

// Strict encoding per variant (M-55, M-56).
func TestDetailedTaskStrictEncode(t *testing.T) {
	v := detailedVariants()
	cases := map[string]struct {
		d    DetailedTask
		want string
	}{
		"input_required without inputRequests": {DetailedTask{Task: baseTask(StatusInputRequired)}, "requires inputRequests"},
		"completed without result":             {DetailedTask{Task: baseTask(StatusCompleted)}, "requires result"},
		"completed with array result":          {DetailedTask{Task: baseTask(StatusCompleted), Result: json.RawMessage(`[1]`)}, "requires result to be a JSON object"},
		"failed without error":                 {DetailedTask{Task: baseTask(StatusFailed)}, "requires error"},
		"working with result":                  {DetailedTask{Task: baseTask(StatusWorking), Result: v["CompletedTask"].Result}, "must not carry result"},
		"cancelled with error":                 {DetailedTask{Task: baseTask(StatusCancelled), Error: v["FailedTask"].Error}, "must not carry error"},
		"completed with inputRequests":         {DetailedTask{Task: baseTask(StatusCompleted), Result: v["CompletedTask"].Result, InputRequests: InputRequests{}}, "must not carry inputRequests"},
		"unknown input method":                 {DetailedTask{Task: baseTask(StatusInputRequired), InputRequests: InputRequests{"k": {Method: "ping"}}}, "is not elicitation/create"},
		"no taskId":                            {DetailedTask{Task: Task{Status: StatusWorking, CreatedAt: t0, LastUpdatedAt: t0}}, "taskId is required"},
		"bad status":                           {DetailedTask{Task: Task{TaskID: "x", Status: "done", CreatedAt: t0, LastUpdatedAt: t0}}, "not a task status"},
		"no createdAt":                         {DetailedTask{Task: Task{TaskID: "x", Status: StatusWorking, LastUpdatedAt: t0}}, "createdAt is required"},
		"ttl out of range":                     {DetailedTask{Task: Task{TaskID: "x", Status: StatusWorking, CreatedAt: t0, LastUpdatedAt: t0, TTLMs: Int64(1 << 60)}}, "JSON-safe"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := json.Marshal(c.d)
			wantErr(t, err, rpc.CodeInternalError, c.want)
			_, err = json.Marshal(GetTaskResult{DetailedTask: c.d})
			wantErr(t, err, rpc.CodeInternalError, c.want)
		})
	}
}

func TestDecodeDetailedTaskLenient(t *testing.T) {
	// Missing payload, timestamps and ttlMs, integral floats, unknown fields:
	// all accepted on decode.
	d, err := DecodeDetailedTask([]byte(`{"taskId":"a","status":"completed","ttlMs":6e4,"pollIntervalMs":5000.0,"extra":{"x":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Result != nil || *d.TTLMs != 60000 || *d.PollIntervalMs != 5000 {
		t.Errorf("lenient decode: %+v", d)
	}
	// failed with an error object lacking message.
	d, err = DecodeDetailedTask([]byte(`{"taskId":"a","status":"failed","error":{"code":-32603}}`))
	if err != nil || d.Error == nil || d.Error.Code != -32603 {
		t.Fatalf("failed decode: %+v %v", d, err)
	}
}

func TestDecodeTaskErrors(t *testing.T) {
	cases := []struct {
		in   string
		code int64
		want []string
	}{
		{`{`, rpc.CodeParseError, []string{"Parse error"}},
		{``, rpc.CodeParseError, []string{"empty input"}},
		{`[]`, rpc.CodeInvalidParams, []string{"must be a JSON object", "an array"}},
		{`{"status":"working"}`, rpc.CodeInvalidParams, []string{`missing required field "taskId"`}},
		{`{"taskId":"","status":"working"}`, rpc.CodeInvalidParams, []string{`"taskId" must not be empty`}},
		{`{"taskId":7,"status":"working"}`, rpc.CodeInvalidParams, []string{`"taskId" must be a string`}},
		{`{"taskId":"a"}`, rpc.CodeInvalidParams, []string{`missing required field "status"`}},
		{`{"taskId":"a","status":"submitted"}`, rpc.CodeInvalidParams, []string{`"status" has unknown value "submitted"`}},
		{`{"taskId":"a","status":"working","ttlMs":"60000"}`, rpc.CodeInvalidParams, []string{`"ttlMs" must be an integer or null`}},
		{`{"taskId":"a","status":"working","ttlMs":1.5}`, rpc.CodeInvalidParams, []string{`"ttlMs"`}},
		{`{"taskId":"a","status":"working","pollIntervalMs":true}`, rpc.CodeInvalidParams, []string{`"pollIntervalMs" must be an integer`}},
		{`{"taskId":"a","status":"working","createdAt":1}`, rpc.CodeInvalidParams, []string{`"createdAt" must be a string`}},
		{`{"taskId":"a","status":"failed","error":"boom"}`, rpc.CodeInvalidParams, []string{`field "error" must be a JSON object`}},
		{`{"taskId":"a","status":"failed","error":{"message":"x"}}`, rpc.CodeInvalidParams, []string{`missing required field "error.code"`}},
		{`{"taskId":"a","status":"input_required","inputRequests":{"k":{"params":{}}}}`, rpc.CodeInvalidParams, []string{`"inputRequests.k.method"`}},
		{`{"taskId":"a","status":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":[]}}}`, rpc.CodeInvalidParams, []string{`"inputRequests.k.params" must be an object`}},
	}
	for _, c := range cases {
		_, err := DecodeDetailedTask([]byte(c.in))
		wantErr(t, err, c.code, c.want...)
	}
}

// M-52: flat creation result, resultType "task".
func TestCreateTaskResult(t *testing.T) {
	c := CreateTaskResult{Task: baseTask(StatusWorking)}
	c.StatusMessage = "The operation is now in progress."
	b := mustMarshal(t, c)
	if !strings.HasPrefix(string(b), `{"resultType":"task","taskId":`) {
		t.Errorf("flat CreateTaskResult expected: %s", b)
	}
	schema(t, schemacheck.Ext, "CreateTaskResult", b)
	back, err := DecodeCreateTaskResult(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("round trip: %+v", back)
	}
	jsonEqual(t, mustMarshal(t, back), b)
	if rt, err := ClassifyResult(b, true); err != nil || rt != ResultTask {
		t.Errorf("ClassifyResult = %q %v", rt, err)
	}

	_, err = DecodeCreateTaskResult([]byte(`{"taskId":"a","status":"working"}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"resultType" is missing; want "task"`)
	_, err = DecodeCreateTaskResult([]byte(`{"resultType":"complete","taskId":"a","status":"working"}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"resultType" is "complete"; want "task"`)
	_, err = json.Marshal(CreateTaskResult{})
	wantErr(t, err, rpc.CodeInternalError, "taskId is required")
}

// The spec examples' erratum: accept resultType "task" on tasks/get, always emit "complete".
func TestGetTaskResultErratum(t *testing.T) {
	in := `{"resultType":"task","taskId":"a","status":"working","createdAt":"` + t0 + `","lastUpdatedAt":"` + t0 + `","ttlMs":null}`
	g, err := DecodeGetTaskResult([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	b := mustMarshal(t, g)
	if !strings.Contains(string(b), `"resultType":"complete"`) {
		t.Errorf("must re-emit complete: %s", b)
	}
	_, err = DecodeGetTaskResult([]byte(`{"resultType":"input_required","taskId":"a","status":"working"}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"resultType" is "input_required"`)
	g, err = DecodeGetTaskResult([]byte(`{"taskId":"a","status":"working","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if si, ok := ServerInfoOf(g.Meta); !ok || si.Name != "S" {
		t.Errorf("ServerInfoOf = %+v %v", si, ok)
	}
}

// M-56: isError:true stays completed in modern.
func TestResultIsError(t *testing.T) {
	d := DetailedTask{Task: baseTask(StatusCompleted), Result: json.RawMessage(`{"content":[],"isError":true}`)}
	if !d.ResultIsError() {
		t.Error("isError:true not detected")
	}
	for _, r := range []string{`{"content":[]}`, `{"isError":false}`, `{"isError":"true"}`, `[]`, ``} {
		if CallToolResultIsError(json.RawMessage(r)) {
			t.Errorf("%q misread as isError", r)
		}
	}
	d.Status = StatusFailed
	if d.ResultIsError() {
		t.Error("only completed tasks carry a result")
	}
}

// ExpiresAt must not wrap: a ttlMs beyond time.Duration's range (~292 years)
// is far in the future, not in the past (M-27: a client gives up after it).
func TestTaskExpiresAtNoOverflow(t *testing.T) {
	created := "2026-09-01T10:00:00Z"
	c, _ := ParseTime(created)
	for _, ttl := range []int64{1e13, maxSafeInt, 1<<63 - 1} {
		at, ok := Task{CreatedAt: created, TTLMs: Int64(ttl)}.ExpiresAt()
		if !ok || !at.After(c.AddDate(200, 0, 0)) {
			t.Errorf("ttlMs %d: ExpiresAt = %v, %v; want far after createdAt", ttl, at, ok)
		}
	}
	if at, ok := (Task{CreatedAt: created, TTLMs: Int64(-5)}).ExpiresAt(); !ok || !at.Equal(c) {
		t.Errorf("negative ttlMs: ExpiresAt = %v, %v; want createdAt", at, ok)
	}
}
