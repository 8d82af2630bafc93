package legacy

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// TestSplitTaskParamL24 covers the opt-in by presence and ttl handling.
func TestSplitTaskParamL24(t *testing.T) {
	type want struct {
		rest    string
		present bool
		ttl     *int64
	}
	for _, tc := range []struct {
		name, in string
		want     want
	}{
		{"empty task opts in", `{"name":"long_job","task":{}}`, want{`{"name":"long_job"}`, true, nil}},
		{"ttl", `{"name":"j","arguments":{"n":3},"task":{"ttl":60000},"_meta":{"progressToken":7}}`,
			want{`{"name":"j","arguments":{"n":3},"_meta":{"progressToken":7}}`, true, Millis(60000)}},
		{"null task is absent", `{"name":"j","task":null}`, want{`{"name":"j"}`, false, nil}},
		{"no task is unchanged", `{ "name" : "j",  "arguments": { "x" : [1, 2] } }`, want{`{ "name" : "j",  "arguments": { "x" : [1, 2] } }`, false, nil}},
		{"null params", `null`, want{`null`, false, nil}},
		{"fractional ttl truncates", `{"name":"j","task":{"ttl":1500.75}}`, want{`{"name":"j"}`, true, Millis(1500)}},
		{"exponent ttl", `{"name":"j","task":{"ttl":6e4}}`, want{`{"name":"j"}`, true, Millis(60000)}},
		{"huge ttl clamps", `{"name":"j","task":{"ttl":123456789012345678901234567890}}`, want{`{"name":"j"}`, true, Millis(math.MaxInt64)}},
		{"overflowing ttl clamps", `{"name":"j","task":{"ttl":1e400}}`, want{`{"name":"j"}`, true, Millis(math.MaxInt64)}},
		{"zero ttl", `{"name":"j","task":{"ttl":0}}`, want{`{"name":"j"}`, true, Millis(0)}},
		{"negative zero ttl", `{"name":"j","task":{"ttl":-0}}`, want{`{"name":"j"}`, true, Millis(0)}},
		{"null ttl", `{"name":"j","task":{"ttl":null}}`, want{`{"name":"j"}`, true, nil}},
		{"unknown task members ignored", `{"name":"j","task":{"pollInterval":5,"ttl":9}}`, want{`{"name":"j"}`, true, Millis(9)}},
		{"duplicate task: last wins, all removed", `{"task":{"ttl":1},"name":"j","task":{"ttl":2}}`, want{`{"name":"j"}`, true, Millis(2)}},
		{"escaped key", `{"name":"j","\u0074ask":{}}`, want{`{"name":"j"}`, true, nil}},
		{"strings with braces kept", `{"name":"a\"}{","task":{},"arguments":{"s":"]\\"}}`, want{`{"name":"a\"}{","arguments":{"s":"]\\"}}`, true, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rest, task, present, err := SplitTaskParam(json.RawMessage(tc.in))
			if err != nil {
				t.Fatalf("SplitTaskParam: %v", err)
			}
			if string(rest) != tc.want.rest {
				t.Errorf("rest = %s, want %s (byte-exact)", rest, tc.want.rest)
			}
			if present != tc.want.present || (task != nil) != present {
				t.Errorf("present = %v, task = %v; want present %v", present, task, tc.want.present)
			}
			if task != nil && !eqPtr(task.TTL, tc.want.ttl) {
				t.Errorf("ttl = %v, want %v", deref(task.TTL), deref(tc.want.ttl))
			}
			if task != nil {
				check(t, "TaskMetadata", enc(t, task))
			}
		})
	}
	rest, task, present, err := SplitTaskParam(nil)
	if rest != nil || task != nil || present || err != nil {
		t.Errorf("SplitTaskParam(nil) = %s %v %v %v", rest, task, present, err)
	}
}

func eqPtr(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestSplitTaskParamErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		code     int64
		frag     string
	}{
		{"not json", `{"name":`, rpc.CodeParseError, "not valid JSON"},
		{"params array", `["x"]`, rpc.CodeInvalidParams, "params must be a JSON object, got an array"},
		{"task string", `{"name":"j","task":"yes"}`, rpc.CodeInvalidParams, "task must be an object"},
		{"task true", `{"name":"j","task":true}`, rpc.CodeInvalidParams, "task must be an object"},
		{"string ttl", `{"name":"j","task":{"ttl":"60000"}}`, rpc.CodeInvalidParams, `task.ttl must be a number of milliseconds, got "60000"`},
		{"object ttl", `{"name":"j","task":{"ttl":{}}}`, rpc.CodeInvalidParams, "task.ttl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := SplitTaskParam(json.RawMessage(tc.in))
			wantCode(t, err, tc.code, tc.frag)
		})
	}
}

func TestSplitTaskParamKeepsCallToolParamsValid(t *testing.T) {
	in := `{"name":"long_job","arguments":{"n":3},"task":{"ttl":60000},"_meta":{"progressToken":7}}`
	check(t, "CallToolRequestParams", []byte(in))
	rest, _, _, err := SplitTaskParam(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	check(t, "CallToolRequestParams", rest)
}

func TestSetTaskParam(t *testing.T) {
	got, err := SetTaskParam(json.RawMessage(`{"name":"j", "arguments":{"a" : 1}}`), &TaskMetadata{TTL: Millis(5)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"j","arguments":{"a" : 1},"task":{"ttl":5}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	check(t, "CallToolRequestParams", got)
	got, err = SetTaskParam(got, &TaskMetadata{})
	if err != nil || string(got) != `{"name":"j","arguments":{"a" : 1},"task":{}}` {
		t.Errorf("replace = %s, %v", got, err)
	}
	got, err = SetTaskParam(got, nil)
	if err != nil || string(got) != `{"name":"j","arguments":{"a" : 1}}` {
		t.Errorf("remove = %s, %v", got, err)
	}
	if got, err = SetTaskParam(nil, &TaskMetadata{}); err != nil || string(got) != `{"task":{}}` {
		t.Errorf("nil params = %s, %v", got, err)
	}
	if _, err = SetTaskParam(json.RawMessage(`{}`), &TaskMetadata{TTL: Millis(-1)}); rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Errorf("negative ttl encoded: %v", err)
	}
	_, err = SetTaskParam(json.RawMessage(`3`), &TaskMetadata{})
	wantCode(t, err, rpc.CodeInvalidParams)
}

func TestDecodeTaskMetadata(t *testing.T) {
	m, err := DecodeTaskMetadata([]byte(`{"ttl":1000}`))
	if err != nil || m.TTL == nil || *m.TTL != 1000 {
		t.Errorf("got %+v, %v", m, err)
	}
	// Unusual ttls are clamped, not rejected (L-20 lets the receiver override).
	for _, raw := range []string{`{"ttl":-3}`, `{"ttl":-0.5}`, `{"ttl":-1e400}`} {
		var viaStd TaskMetadata
		if err := json.Unmarshal([]byte(raw), &viaStd); err != nil || viaStd.TTL == nil || *viaStd.TTL != 0 {
			t.Errorf("json.Unmarshal %s = %+v, %v; want ttl clamped to 0", raw, viaStd.TTL, err)
		}
	}
	var str TaskMetadata
	if err := json.Unmarshal([]byte(`{"ttl":"3"}`), &str); rpc.CodeOf(err) != rpc.CodeInvalidParams {
		t.Errorf("json.Unmarshal string ttl: %v", err)
	}
	if b := enc(t, TaskMetadata{}); string(b) != `{}` {
		t.Errorf("empty TaskMetadata = %s, want {}", b)
	}
}
