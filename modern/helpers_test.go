package modern

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

const (
	t0 = "2025-11-25T10:30:00.000Z"
	t1 = "2025-11-25T10:40:00.000Z"
)

func sid(s string) jsonrpc.ID {
	id, err := jsonrpc.MakeID(s)
	if err != nil {
		panic(err)
	}
	return id
}

func nid(n int64) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		panic(err)
	}
	return id
}

// mustMarshal encodes v and fails the test on error.
func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return b
}

// schema validates b against def of s.
func schema(t testing.TB, s schemacheck.Schema, def string, b []byte) {
	t.Helper()
	schemacheck.Load(t).Check(t, s, def, b)
}

// wantErr asserts err is a *rpc.Error with code and a message containing every part.
func wantErr(t testing.TB, err error, code int64, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %d containing %q, got nil", code, parts)
	}
	var e *rpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("want *rpc.Error, got %T: %v", err, err)
	}
	if e.Code != code {
		t.Errorf("code = %d, want %d (message %q)", e.Code, code, e.Message)
	}
	for _, p := range parts {
		if !strings.Contains(e.Message, p) {
			t.Errorf("message %q does not contain %q", e.Message, p)
		}
	}
}

// jsonEqual compares two JSON texts semantically.
func jsonEqual(t testing.TB, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

func baseTask(status TaskStatus) Task {
	return Task{TaskID: "786512e2-9e0d-44bd-8f29-789f320fe840", Status: status, CreatedAt: t0, LastUpdatedAt: t1, TTLMs: Int64(60000), PollIntervalMs: Int64(5000)}
}

var elicitReq = InputRequest{Method: MethodElicitationCreate, Params: json.RawMessage(
	`{"mode":"form","message":"Please enter your name.","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`)}

var samplingReq = InputRequest{Method: MethodSamplingCreateMessage, Params: json.RawMessage(
	`{"messages":[{"role":"user","content":{"type":"text","text":"Capital of France?"}}],"maxTokens":100}`)}

var rootsReq = InputRequest{Method: MethodRootsList}

var jsonrpcZeroID jsonrpc.ID

type (
	jsonrpcRequest  = jsonrpc.Request
	jsonrpcResponse = jsonrpc.Response
)
