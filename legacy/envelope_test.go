package legacy

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tasksbridge/tasksbridge/rpc"
)

func TestTypedRequestsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		def    string
		v      any
		want   string
		decode func([]byte) (any, error)
	}{
		{"GetTaskRequest", GetTaskRequest{ID: IntID(8), Params: GetTaskParams{TaskID: "3f2c"}},
			`{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"3f2c"}}`,
			func(b []byte) (any, error) { return DecodeGetTaskRequest(b) }},
		{"GetTaskPayloadRequest", GetTaskPayloadRequest{ID: StringID("r-9"), Params: GetTaskPayloadParams{TaskID: "3f2c"}},
			`{"jsonrpc":"2.0","id":"r-9","method":"tasks/result","params":{"taskId":"3f2c"}}`,
			func(b []byte) (any, error) { return DecodeGetTaskPayloadRequest(b) }},
		{"CancelTaskRequest", CancelTaskRequest{ID: IntID(11), Params: CancelTaskParams{TaskID: "3f2c"}},
			`{"jsonrpc":"2.0","id":11,"method":"tasks/cancel","params":{"taskId":"3f2c"}}`,
			func(b []byte) (any, error) { return DecodeCancelTaskRequest(b) }},
		{"ListTasksRequest", ListTasksRequest{ID: IntID(10)},
			`{"jsonrpc":"2.0","id":10,"method":"tasks/list","params":{}}`,
			func(b []byte) (any, error) { return DecodeListTasksRequest(b) }},
		{"ListTasksRequest", ListTasksRequest{ID: IntID(12), Params: ListTasksParams{Cursor: "b2"}},
			`{"jsonrpc":"2.0","id":12,"method":"tasks/list","params":{"cursor":"b2"}}`,
			func(b []byte) (any, error) { return DecodeListTasksRequest(b) }},
	} {
		b := enc(t, tc.v)
		if string(b) != tc.want {
			t.Errorf("%s: got %s\nwant %s", tc.def, b, tc.want)
		}
		check(t, tc.def, b)
		check(t, "JSONRPCRequest", b)
		got, err := tc.decode(b)
		if err != nil || !reflect.DeepEqual(got, tc.v) {
			t.Errorf("%s: decode = %+v, %v", tc.def, got, err)
		}
	}
	// tasks/list params may be missing entirely (TS listTasks without cursor).
	r, err := DecodeListTasksRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/list"}`))
	if err != nil || r.Params.Cursor != "" || string(r.ID) != "1" {
		t.Errorf("tasks/list without params = %+v, %v", r, err)
	}
}

func TestEnvelopeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		code     int64
		frag     string
	}{
		{"not json", `{"jsonrpc":"2.0",`, rpc.CodeParseError, "not valid JSON"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tasks/get"}]`, rpc.CodeInvalidRequest, "must be a JSON object, got an array"},
		{"no jsonrpc", `{"id":1,"method":"tasks/get","params":{"taskId":"a"}}`, rpc.CodeInvalidRequest, `jsonrpc must be "2.0"`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{"taskId":"a"}}`, rpc.CodeInvalidRequest, `jsonrpc must be "2.0"`},
		{"no id", `{"jsonrpc":"2.0","method":"tasks/get","params":{"taskId":"a"}}`, rpc.CodeInvalidRequest, "id must be a string or a number"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tasks/get","params":{"taskId":"a"}}`, rpc.CodeInvalidRequest, "id must be"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"tasks/get","params":{"taskId":"a"}}`, rpc.CodeInvalidRequest, "id must be"},
		{"no method", `{"jsonrpc":"2.0","id":1,"params":{"taskId":"a"}}`, rpc.CodeInvalidRequest, "method must be a non-empty string"},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":5}`, rpc.CodeInvalidRequest, "method must be"},
		{"wrong method", `{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}`, rpc.CodeInvalidRequest, `method is "tasks/list", expected tasks/get`},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":["a"]}`, rpc.CodeInvalidParams, "params must be an object, got an array"},
		{"missing params", `{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`, rpc.CodeInvalidParams, "params are required"},
		{"missing taskId", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"a"}}`, rpc.CodeInvalidParams, "tasks/get params: taskId is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeGetTaskRequest([]byte(tc.in))
			wantCode(t, err, tc.code, tc.frag)
		})
	}
}

func TestRequestNotificationResponse(t *testing.T) {
	req, err := DecodeRequest([]byte(`{"jsonrpc":"2.0","id":"srv-17","method":"elicitation/create","params":{"mode":"form"},"extra":1}`))
	if err != nil || req.Method != MethodElicitationCreate || string(req.ID) != `"srv-17"` || string(req.Params) != `{"mode":"form"}` {
		t.Fatalf("DecodeRequest = %+v, %v", req, err)
	}
	b := enc(t, req)
	check(t, "JSONRPCRequest", b)
	if _, err := json.Marshal(Request{Method: "x"}); rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Errorf("request without id encoded: %v", err)
	}
	if _, err := json.Marshal(Request{ID: IntID(1), Method: "x", Params: json.RawMessage(`[1]`)}); err == nil {
		t.Error("array params encoded")
	}

	n, err := DecodeNotification([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`))
	if err != nil || n.Method != MethodCancelled {
		t.Fatalf("DecodeNotification = %+v, %v", n, err)
	}
	check(t, "JSONRPCNotification", enc(t, n))
	_, err = DecodeNotification([]byte(`{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled"}`))
	wantCode(t, err, rpc.CodeInvalidRequest, "must not have an id")
	_, err = DecodeTaskStatusNotification([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`))
	wantCode(t, err, rpc.CodeInvalidRequest, "expected notifications/tasks/status")
	_, err = DecodeTaskStatusNotification([]byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status"}`))
	wantCode(t, err, rpc.CodeInvalidParams, "params are required")
	_, err = DecodeTaskStatusNotification([]byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"a","status":"working","createdAt":"c","lastUpdatedAt":"u"}}`))
	wantCode(t, err, rpc.CodeInvalidParams, "ttl is required")

	ok, err := DecodeResponse([]byte(`{"jsonrpc":"2.0","id":9,"result":{"content":[]}}`))
	if err != nil || string(ok.Result) != `{"content":[]}` || ok.Error != nil {
		t.Fatalf("DecodeResponse = %+v, %v", ok, err)
	}
	check(t, "JSONRPCResultResponse", enc(t, ok))
	er, err := DecodeResponse([]byte(`{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"Task not found","data":{"a":1}}}`))
	if err != nil || er.Error == nil || er.Error.Code != -32602 || string(er.Error.Data) != `{"a":1}` {
		t.Fatalf("DecodeResponse(error) = %+v, %v", er, err)
	}
	check(t, "JSONRPCErrorResponse", enc(t, er))
	noID := enc(t, Response{Error: TaskNotFoundError("x")})
	check(t, "JSONRPCErrorResponse", noID)
	for _, in := range []string{`{"jsonrpc":"2.0","error":{"code":-32700,"message":"m"}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`} {
		if r, err := DecodeResponse([]byte(in)); err != nil || r.ID != nil {
			t.Errorf("DecodeResponse(%s) = %+v, %v", in, r, err)
		}
	}
	for _, tc := range []struct{ in, frag string }{
		{`{"jsonrpc":"2.0","id":1}`, "exactly one of result and error"},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, "exactly one of result and error"},
		{`{"jsonrpc":"2.0","result":{}}`, "id must be"},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, "id must be"},
		{`{"jsonrpc":"2.0","id":[],"error":{"code":1,"message":"m"}}`, "id must be"},
		{`{"jsonrpc":"2.0","id":1,"result":[]}`, "result must be an object"},
		{`{"jsonrpc":"2.0","id":1,"error":"boom"}`, "error must be an object"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`, "error.code must be an integer"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, "error.code must be an integer"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, "error.message must be a string"},
	} {
		_, err := DecodeResponse([]byte(tc.in))
		wantCode(t, err, rpc.CodeInvalidRequest, tc.frag)
	}
	if _, err := json.Marshal(Response{ID: IntID(1)}); rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Errorf("response without result or error encoded: %v", err)
	}
}
