package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// enc marshals v and fails the test on error.
func enc(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return b
}

// check validates msg against the 2025-11-25 schema definition def.
func check(t testing.TB, def string, msg []byte) {
	t.Helper()
	schemacheck.Load(t).Check(t, schemacheck.Legacy, def, msg)
}

// wantCode asserts that err is an *rpc.Error with the given code and that its
// message contains every fragment.
func wantCode(t testing.TB, err error, code int64, fragments ...string) {
	t.Helper()
	var e *rpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *rpc.Error", err, err)
	}
	if e.Code != code {
		t.Errorf("code = %d, want %d (message %q)", e.Code, code, e.Message)
	}
	for _, f := range fragments {
		if !strings.Contains(e.Message, f) {
			t.Errorf("message %q does not contain %q", e.Message, f)
		}
	}
}

// jsonEq reports whether a and b are the same JSON value.
func jsonEq(t testing.TB, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v: %s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

func compact(t testing.TB, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compact %s: %v", b, err)
	}
	return buf.String()
}

const (
	ts0 = "2025-11-25T10:30:00.000Z"
	ts1 = "2025-11-25T10:30:04.120Z"
)

// sampleTask is a fully populated valid task.
func sampleTask() Task {
	return Task{TaskID: "3f2c9e0a6b1d4c7e9a8b5d2f1e0c3a4b", Status: StatusWorking, StatusMessage: "step 2/5",
		CreatedAt: ts0, LastUpdatedAt: ts1, TTL: Millis(60000), PollInterval: Millis(1000)}
}
