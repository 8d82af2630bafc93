package modern

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

func tasksMeta() *RequestMeta {
	m := NewRequestMeta(TasksCapabilities(), bridgeInfo)
	return &m
}

// tasks/get, tasks/update, tasks/cancel requests validate against the ext
// schema, their params carry a valid core _meta (M-01, M-20), and decode back.
func TestTaskRequests(t *testing.T) {
	id := "786512e2-9e0d-44bd-8f29-789f320fe840"
	get := GetTaskParams{TaskID: id, Meta: tasksMeta()}
	upd := UpdateTaskParams{TaskID: id, Meta: tasksMeta(), InputResponses: InputResponses{"name": json.RawMessage(`{"action":"accept","content":{"name":"Luca"}}`)}}
	cancel := CancelTaskParams{TaskID: id, Meta: tasksMeta()}
	cases := []struct {
		method, def string
		params      any
		decode      func([]byte) (any, error)
	}{
		{MethodTasksGet, "GetTaskRequest", get, func(b []byte) (any, error) { return DecodeGetTaskParams(b) }},
		{MethodTasksUpdate, "UpdateTaskRequest", upd, func(b []byte) (any, error) { return DecodeUpdateTaskParams(b) }},
		{MethodTasksCancel, "CancelTaskRequest", cancel, func(b []byte) (any, error) { return DecodeCancelTaskParams(b) }},
	}
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			msg, err := EncodeRequest(nid(6), c.method, c.params)
			if err != nil {
				t.Fatal(err)
			}
			schema(t, schemacheck.Ext, c.def, msg)
			req, err := DecodeRequest(msg)
			if err != nil || req.Method != c.method || !req.IsCall() {
				t.Fatalf("DecodeRequest: %+v %v", req, err)
			}
			schema(t, schemacheck.Modern, "RequestParams", req.Params)
			back, err := c.decode(req.Params)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(mustMarshal(t, back), mustMarshal(t, c.params)) {
				t.Errorf("round trip:\n%s\n%s", mustMarshal(t, back), mustMarshal(t, c.params))
			}
			meta, err := DecodeRequestMeta(req.Params)
			if err != nil || meta.Validate() != nil || !meta.TasksDeclared() {
				t.Errorf("meta: %+v %v", meta, err)
			}
			// M-32: Mcp-Name mirrors params.taskId.
			h, err := RequestHeaders(msg)
			if err != nil || h.Get(HeaderName) != id || h.Get(HeaderMethod) != c.method {
				t.Errorf("headers = %v %v", h, err)
			}
		})
	}
}

func TestTaskParamsErrors(t *testing.T) {
	cases := []struct {
		dec  func([]byte) error
		in   string
		code int64
		want string
	}{
		{func(b []byte) error { _, e := DecodeGetTaskParams(b); return e }, ``, rpc.CodeInvalidParams, `tasks/get params: missing required field "taskId"`},
		{func(b []byte) error { _, e := DecodeGetTaskParams(b); return e }, `{}`, rpc.CodeInvalidParams, `tasks/get params: missing required field "taskId"`},
		{func(b []byte) error { _, e := DecodeGetTaskParams(b); return e }, `{"taskId":null}`, rpc.CodeInvalidParams, `missing required field "taskId"`},
		{func(b []byte) error { _, e := DecodeGetTaskParams(b); return e }, `{"taskId":42}`, rpc.CodeInvalidParams, `"taskId" must be a string, got a number 42`},
		{func(b []byte) error { _, e := DecodeGetTaskParams(b); return e }, `{"taskId":"a","_meta":1}`, rpc.CodeInvalidParams, `"_meta" must be a JSON object`},
		{func(b []byte) error { _, e := DecodeCancelTaskParams(b); return e }, `{"taskId":""}`, rpc.CodeInvalidParams, `tasks/cancel params: field "taskId" must not be empty`},
		{func(b []byte) error { _, e := DecodeCancelTaskParams(b); return e }, `{"taskId":`, rpc.CodeParseError, "Parse error"},
		{func(b []byte) error { _, e := DecodeUpdateTaskParams(b); return e }, `{"taskId":"a"}`, rpc.CodeInvalidParams, `tasks/update params: missing required field "inputResponses"`},
		{func(b []byte) error { _, e := DecodeUpdateTaskParams(b); return e }, `{"taskId":"a","inputResponses":{"k":"yes"}}`, rpc.CodeInvalidParams, `"inputResponses.k" must be an object`},
		{func(b []byte) error { _, e := DecodeUpdateTaskParams(b); return e }, `null`, rpc.CodeInvalidParams, `missing required field "taskId"`},
	}
	for _, c := range cases {
		wantErr(t, c.dec([]byte(c.in)), c.code, c.want)
	}
	// Legacy "task" param and unknown fields are kept, not errors (M-66 says ignore).
	p, err := DecodeGetTaskParams([]byte(`{"taskId":"a","task":{"ttl":1}}`))
	if err != nil || string(p.Extra["task"]) != `{"ttl":1}` {
		t.Errorf("extra: %+v %v", p, err)
	}
	_, err = json.Marshal(GetTaskParams{})
	wantErr(t, err, rpc.CodeInternalError, "taskId is required")
	_, err = json.Marshal(UpdateTaskParams{TaskID: "a"})
	wantErr(t, err, rpc.CodeInternalError, "inputResponses is required")
}
