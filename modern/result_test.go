package modern

import (
	"encoding/json"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// M-04: missing = complete, unknown = invalid, "task" only with the extension.
func TestClassifyResult(t *testing.T) {
	cases := []struct {
		raw   string
		tasks bool
		want  ResultType
		code  int64
		msg   string
	}{
		{`{"content":[]}`, false, ResultComplete, 0, ""},
		{`{"resultType":"complete"}`, false, ResultComplete, 0, ""},
		{`{"resultType":"input_required","requestState":"x"}`, false, ResultInputRequired, 0, ""},
		{`{"resultType":"task","taskId":"a"}`, true, ResultTask, 0, ""},
		{`{"resultType":"task","taskId":"a"}`, false, "", rpc.CodeInvalidParams, `resultType "task" is only valid when the request declared the io.modelcontextprotocol/tasks extension`},
		{`{"resultType":"partial"}`, true, "", rpc.CodeInvalidParams, `unrecognised resultType "partial"`},
		{`{"resultType":""}`, true, "", rpc.CodeInvalidParams, `unrecognised resultType ""`},
		{`{"resultType":1}`, true, "", rpc.CodeInvalidParams, `"resultType" must be a string`},
		{`{"resultType":null}`, false, ResultComplete, 0, ""},
		{`[]`, true, "", rpc.CodeInvalidParams, "must be a JSON object"},
		{`{"resultType":`, true, "", rpc.CodeParseError, "Parse error"},
	}
	for _, c := range cases {
		got, err := ClassifyResult([]byte(c.raw), c.tasks)
		if c.code != 0 {
			wantErr(t, err, c.code, c.msg)
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ClassifyResult(%s, %v) = %q, %v; want %q", c.raw, c.tasks, got, err, c.want)
		}
	}
}

// M-22 / M-48: per-method rules.
func TestClassifyResultFor(t *testing.T) {
	task := []byte(`{"resultType":"task","taskId":"a"}`)
	ir := []byte(`{"resultType":"input_required","requestState":"s"}`)
	if rt, err := ClassifyResultFor(MethodToolsCall, task, true); err != nil || rt != ResultTask {
		t.Errorf("tools/call task: %q %v", rt, err)
	}
	_, err := ClassifyResultFor(MethodPromptsGet, task, true)
	wantErr(t, err, rpc.CodeInvalidParams, "not allowed in reply to prompts/get", "M-22")
	for _, m := range []string{MethodToolsCall, MethodPromptsGet, MethodResourcesRead} {
		if rt, err := ClassifyResultFor(m, ir, false); err != nil || rt != ResultInputRequired {
			t.Errorf("%s input_required: %q %v", m, rt, err)
		}
	}
	_, err = ClassifyResultFor(MethodToolsList, ir, false)
	wantErr(t, err, rpc.CodeInvalidParams, `"input_required" is not allowed in reply to tools/list`)
	_, err = ClassifyResultFor(MethodToolsCall, task, false)
	wantErr(t, err, rpc.CodeInvalidParams, "only valid when the request declared")
}

// M-58, M-59: acknowledgements are {"resultType":"complete"}.
func TestEmptyResult(t *testing.T) {
	b := mustMarshal(t, EmptyResult{})
	if string(b) != `{"resultType":"complete"}` {
		t.Errorf("ack = %s", b)
	}
	schema(t, schemacheck.Ext, "UpdateTaskResult", b)
	schema(t, schemacheck.Ext, "CancelTaskResult", b)
	schema(t, schemacheck.Modern, "EmptyResult", b)
	meta, err := WithServerInfo(nil, Implementation{Name: "S", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	mb := mustMarshal(t, CancelTaskResult{Meta: meta})
	schema(t, schemacheck.Ext, "CancelTaskResult", mb)
	for _, in := range []string{`{}`, `{"resultType":"complete","_meta":{}}`, `{"resultType":"complete","extra":1}`} {
		if _, err := DecodeEmptyResult([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	_, err = DecodeEmptyResult([]byte(`{"resultType":"task"}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"resultType" is "task"; want "complete"`)
	_, err = DecodeEmptyResult([]byte(`{"_meta":[]}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"_meta" must be an object`)
	var e EmptyResult
	if err := json.Unmarshal([]byte(`{"resultType":"complete","_meta":{"a":1}}`), &e); err != nil || string(e.Meta["a"]) != "1" {
		t.Errorf("unmarshal: %+v %v", e, err)
	}
}
