package legacy

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// TestTaskTTLAlwaysPresentL21: a nil TTL encodes as "ttl": null, never omitted.
func TestTaskTTLAlwaysPresentL21(t *testing.T) {
	tk := NewTask("t1", time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC), nil, nil)
	b := enc(t, tk)
	want := `{"taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00.000Z","lastUpdatedAt":"2025-11-25T10:30:00.000Z","ttl":null}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	check(t, "Task", b)
	// The schema itself requires the key: the same task without it is rejected,
	// which is what TS clients do too.
	if err := schemacheck.Load(t).Validate(schemacheck.Legacy, "Task", []byte(strings.Replace(string(b), `,"ttl":null`, "", 1))); err == nil {
		t.Error("schema accepted a Task without ttl; the schema check is not effective")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if v, ok := m["ttl"]; !ok || string(v) != "null" {
		t.Errorf("ttl = %s, %v; want null present", v, ok)
	}
	if _, ok := m["pollInterval"]; ok {
		t.Error("nil pollInterval encoded")
	}
	// Also nested and in lists.
	for _, v := range []any{CreateTaskResult{Task: tk}, ListTasksResult{Tasks: []Task{tk}}, GetTaskResult{Task: tk}} {
		if b := enc(t, v); !json.Valid(b) || !contains(b, `"ttl":null`) {
			t.Errorf("%T: %s lacks ttl:null", v, b)
		}
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

func TestNewTaskStartsWorkingL17(t *testing.T) {
	now := time.Date(2025, 11, 25, 10, 30, 0, 5_000_000, time.FixedZone("Y", -5*3600))
	tk := NewTask("id", now, Millis(5), Millis(7))
	if tk.Status != StatusWorking || tk.CreatedAt != tk.LastUpdatedAt || tk.CreatedAt != "2025-11-25T15:30:00.005Z" {
		t.Errorf("NewTask = %+v", tk)
	}
	if err := tk.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	at, ok := tk.ExpiresAt()
	if !ok || !at.Equal(now.Add(5*time.Millisecond)) {
		t.Errorf("ExpiresAt = %v, %v", at, ok)
	}
	if _, ok := NewTask("id", now, nil, nil).ExpiresAt(); ok {
		t.Error("unlimited ttl has an expiry")
	}
	if huge, ok := NewTask("id", now, Millis(math.MaxInt64), nil).ExpiresAt(); !ok || !huge.After(now) {
		t.Errorf("huge ttl ExpiresAt = %v, %v; want far future", huge, ok)
	}
	if got := *DurationMillis(1500 * time.Millisecond); got != 1500 {
		t.Errorf("DurationMillis = %d", got)
	}
	if got := *DurationMillis(-time.Second); got != 0 {
		t.Errorf("DurationMillis(negative) = %d", got)
	}
}

func TestTaskRoundTrip(t *testing.T) {
	for name, tk := range map[string]Task{
		"full":    sampleTask(),
		"nullttl": {TaskID: "a", Status: StatusCompleted, CreatedAt: ts0, LastUpdatedAt: ts1},
		"zero":    {TaskID: "a", Status: StatusInputRequired, CreatedAt: ts0, LastUpdatedAt: ts0, TTL: Millis(0), PollInterval: Millis(0)},
	} {
		t.Run(name, func(t *testing.T) {
			b := enc(t, tk)
			check(t, "Task", b)
			got, err := DecodeTask(b)
			if err != nil {
				t.Fatalf("DecodeTask(%s): %v", b, err)
			}
			if !reflect.DeepEqual(got, tk) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, tk)
			}
			var viaStd Task
			if err := json.Unmarshal(b, &viaStd); err != nil || !reflect.DeepEqual(viaStd, tk) {
				t.Errorf("json.Unmarshal = %+v, %v", viaStd, err)
			}
		})
	}
}

// TestDecodeTaskLenient: unknown members are ignored, ttl/pollInterval accept
// any non-negative number (truncated, clamped), timestamps are kept verbatim.
func TestDecodeTaskLenient(t *testing.T) {
	in := `{"taskId":"x","status":"failed","statusMessage":null,"createdAt":"2025-11-25T10:30:00+01:00",
		"lastUpdatedAt":"later","ttl":60000.9,"pollInterval":1e300,"resultType":"task","extra":{"a":[1]}}`
	tk, err := DecodeTask([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Task{TaskID: "x", Status: StatusFailed, CreatedAt: "2025-11-25T10:30:00+01:00", LastUpdatedAt: "later",
		TTL: Millis(60000), PollInterval: Millis(math.MaxInt64)}
	if !reflect.DeepEqual(tk, want) {
		t.Errorf("got %+v\nwant %+v", tk, want)
	}
	// Lenient decode, strict encode: "later" is not a timestamp.
	if _, err := json.Marshal(tk); err == nil {
		t.Error("task with unparsable lastUpdatedAt encoded")
	}
}

func TestDecodeTaskErrors(t *testing.T) {
	const ok = `"taskId":"a","status":"working","createdAt":"c","lastUpdatedAt":"u"`
	for _, tc := range []struct {
		name, in string
		code     int64
		frag     string
	}{
		{"not json", `{"taskId":`, rpc.CodeParseError, "not valid JSON"},
		{"empty", ``, rpc.CodeParseError, "not valid JSON"},
		{"array", `[]`, rpc.CodeInvalidParams, "must be a JSON object"},
		{"missing taskId", `{"status":"working","createdAt":"c","lastUpdatedAt":"u","ttl":null}`, rpc.CodeInvalidParams, "taskId is required"},
		{"numeric taskId", `{"taskId":1,"status":"working","createdAt":"c","lastUpdatedAt":"u","ttl":null}`, rpc.CodeInvalidParams, "taskId must be a string, got a number"},
		{"empty taskId", `{"taskId":"","status":"working","createdAt":"c","lastUpdatedAt":"u","ttl":null}`, rpc.CodeInvalidParams, "taskId must not be empty"},
		{"missing status", `{"taskId":"a","createdAt":"c","lastUpdatedAt":"u","ttl":null}`, rpc.CodeInvalidParams, "status is required"},
		{"bad status", `{"taskId":"a","status":"submitted","createdAt":"c","lastUpdatedAt":"u","ttl":null}`, rpc.CodeInvalidParams, `status must be one of`},
		{"missing ttl", `{` + ok + `}`, rpc.CodeInvalidParams, "ttl is required"},
		{"string ttl", `{` + ok + `,"ttl":"60000"}`, rpc.CodeInvalidParams, "ttl must be a number of milliseconds"},
		{"bool pollInterval", `{` + ok + `,"ttl":1,"pollInterval":true}`, rpc.CodeInvalidParams, "pollInterval must be a number of milliseconds"},
		{"missing createdAt", `{"taskId":"a","status":"working","lastUpdatedAt":"u","ttl":null}`, rpc.CodeInvalidParams, "createdAt is required"},
		{"null lastUpdatedAt", `{"taskId":"a","status":"working","createdAt":"c","lastUpdatedAt":null,"ttl":null}`, rpc.CodeInvalidParams, "lastUpdatedAt must be a string, got null"},
		{"numeric statusMessage", `{` + ok + `,"ttl":1,"statusMessage":5}`, rpc.CodeInvalidParams, "statusMessage must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeTask([]byte(tc.in))
			wantCode(t, err, tc.code, tc.frag)
			var viaStd Task
			if err := json.Unmarshal([]byte(tc.in), &viaStd); err == nil {
				t.Error("json.Unmarshal accepted it")
			}
		})
	}
}

func TestTaskValidate(t *testing.T) {
	for name, mut := range map[string]func(*Task){
		"empty id":          func(t *Task) { t.TaskID = "" },
		"bad status":        func(t *Task) { t.Status = "done" },
		"no createdAt":      func(t *Task) { t.CreatedAt = "" },
		"no lastUpdatedAt":  func(t *Task) { t.LastUpdatedAt = "" },
		"bad createdAt":     func(t *Task) { t.CreatedAt = "noon" },
		"bad lastUpdatedAt": func(t *Task) { t.LastUpdatedAt = "1700000000" },
		"negative ttl":      func(t *Task) { t.TTL = Millis(-1) },
		"negative poll":     func(t *Task) { t.PollInterval = Millis(-5) },
	} {
		tk := sampleTask()
		mut(&tk)
		err := tk.Validate()
		wantCode(t, err, rpc.CodeInternalError)
		if _, merr := json.Marshal(tk); merr == nil {
			t.Errorf("%s: invalid task encoded", name)
		} else if rpc.CodeOf(merr) != rpc.CodeInternalError {
			t.Errorf("%s: marshal error %v does not carry -32603", name, merr)
		}
	}
	if err := sampleTask().Validate(); err != nil {
		t.Errorf("sample task invalid: %v", err)
	}
}
