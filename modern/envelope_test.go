package modern

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

func TestDecodeRequest(t *testing.T) {
	req, err := DecodeRequest([]byte(` {"jsonrpc":"2.0","id":"b-1","method":"tools/call","params":{"name":"x"}} `))
	if err != nil || req.ID.Raw() != "b-1" || req.Method != MethodToolsCall || string(req.Params) != `{"name":"x"}` {
		t.Fatalf("%+v %v", req, err)
	}
	req, err = DecodeRequest([]byte(`{"jsonrpc":"2.0","id":7,"method":"server/discover"}`))
	if err != nil || req.ID.Raw() != int64(7) || req.Params != nil {
		t.Fatalf("%+v %v", req, err)
	}
	req, err = DecodeRequest([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":null}`))
	if err != nil || req.IsCall() || req.Params != nil {
		t.Fatalf("notification: %+v %v", req, err)
	}
	cases := []struct {
		in   string
		code int64
		want string
	}{
		{``, rpc.CodeParseError, "empty input"},
		{`{"jsonrpc":"2.0",`, rpc.CodeParseError, "Parse error"},
		{`[{"jsonrpc":"2.0","method":"x"}]`, rpc.CodeInvalidRequest, "must be a JSON object, got an array"},
		{`{"method":"x","id":1}`, rpc.CodeInvalidRequest, `"jsonrpc" must be "2.0"`},
		{`{"jsonrpc":"1.0","method":"x","id":1}`, rpc.CodeInvalidRequest, `"jsonrpc" must be "2.0"`},
		{`{"jsonrpc":"2.0","id":1}`, rpc.CodeInvalidRequest, `missing "method"`},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, rpc.CodeInvalidRequest, `"method" must be a non-empty string`},
		{`{"jsonrpc":"2.0","id":1,"method":3}`, rpc.CodeInvalidRequest, `"method" must be a non-empty string, got a number 3`},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, rpc.CodeInvalidRequest, `"id" must be a string or an integer (never null)`},
		{`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, rpc.CodeInvalidRequest, `"id" must be a string or an integer`},
		{`{"jsonrpc":"2.0","id":{},"method":"x"}`, rpc.CodeInvalidRequest, `"id" must be a string or an integer`},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, rpc.CodeInvalidRequest, "it is a response"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","error":{}}`, rpc.CodeInvalidRequest, "it is a response"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`, rpc.CodeInvalidParams, "tools/call params must be a JSON object, got an array"},
	}
	for _, c := range cases {
		_, err := DecodeRequest([]byte(c.in))
		wantErr(t, err, c.code, c.want)
	}
}

func TestDecodeResponse(t *testing.T) {
	r, err := DecodeResponse([]byte(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"task","taskId":"U"}}`))
	if err != nil || r.ID.Raw() != int64(2) || r.Error != nil {
		t.Fatalf("%+v %v", r, err)
	}
	if rt, _ := ClassifyResult(r.Result, true); rt != ResultTask {
		t.Errorf("classify %s", rt)
	}
	r, err = DecodeResponse([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := rpc.As(r.Error)
	if e.Code != rpc.CodeMissingRequiredClientCapability {
		t.Fatalf("error %+v", e)
	}
	if caps, _, ok := RequiredCapabilitiesOf(e); !ok || !caps.HasTasksExtension() {
		t.Error("requiredCapabilities lost")
	}
	// Errors without id (an unreadable request) are responses too.
	if r, err := DecodeResponse([]byte(`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`)); err != nil || r.ID.IsValid() {
		t.Errorf("id-less error: %+v %v", r, err)
	}
	cases := []struct {
		in   string
		code int64
		want string
	}{
		{`nope`, rpc.CodeParseError, "Parse error"},
		{`1`, rpc.CodeInvalidRequest, "must be a JSON object"},
		{`{"id":1,"result":{}}`, rpc.CodeInvalidRequest, `"jsonrpc" must be "2.0"`},
		{`{"jsonrpc":"2.0","id":1}`, rpc.CodeInvalidRequest, `needs "result" or "error"`},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`, rpc.CodeInvalidRequest, "both"},
		{`{"jsonrpc":"2.0","id":1,"result":[]}`, rpc.CodeInvalidRequest, `"result" must be a JSON object`},
		{`{"jsonrpc":"2.0","result":{}}`, rpc.CodeInvalidRequest, `needs the "id"`},
		{`{"jsonrpc":"2.0","id":true,"result":{}}`, rpc.CodeInvalidRequest, `"id" must be a string or an integer`},
		{`{"jsonrpc":"2.0","id":1,"error":"boom"}`, rpc.CodeInvalidRequest, `"error" must be a JSON object`},
		{`{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, rpc.CodeInvalidRequest, `"error.code"`},
		{`{"jsonrpc":"2.0","id":1,"method":"x"}`, rpc.CodeInvalidRequest, "it is a request"},
	}
	for _, c := range cases {
		_, err := DecodeResponse([]byte(c.in))
		wantErr(t, err, c.code, c.want)
	}
}

func TestEncodeEnvelopes(t *testing.T) {
	// Raw params are embedded verbatim (escapes included, M-18).
	p := json.RawMessage(`{"name":"x","requestState":"a\u003cb",` + metaJSON + `}`)
	b, err := EncodeRequest(sid("r-2"), MethodToolsCall, p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"requestState":"a\u003cb"`) {
		t.Errorf("params re-encoded: %s", b)
	}
	schema(t, schemacheck.Modern, "CallToolRequest", b)
	if _, err := EncodeRequest(sid("x"), "", nil); err == nil {
		t.Error("empty method encoded")
	}
	_, err = EncodeRequest(sid("x"), "m", json.RawMessage(`[1]`))
	wantErr(t, err, rpc.CodeInternalError, "params must be a JSON object")
	_, err = EncodeRequest(sid("x"), "m", []byte(`{`))
	wantErr(t, err, rpc.CodeInternalError, "not valid JSON")
	n, err := EncodeNotification("notifications/cancelled", nil)
	if err != nil || string(n) != `{"jsonrpc":"2.0","method":"notifications/cancelled"}` {
		t.Errorf("notification = %s %v", n, err)
	}
	_, err = EncodeResult(jsonrpcZeroID, EmptyResult{})
	wantErr(t, err, rpc.CodeInternalError, "id is required")
	_, err = EncodeResult(nid(1), nil)
	wantErr(t, err, rpc.CodeInternalError, "result is required")
	_, err = EncodeResult(nid(1), CreateTaskResult{})
	wantErr(t, err, rpc.CodeInternalError, "taskId is required")
	_, err = EncodeError(nid(1), nil)
	wantErr(t, err, rpc.CodeInternalError, "error is required")
	ack, err := EncodeResult(nid(6), UpdateTaskResult{})
	if err != nil || string(ack) != `{"jsonrpc":"2.0","id":6,"result":{"resultType":"complete"}}` {
		t.Errorf("ack = %s %v", ack, err)
	}
	schema(t, schemacheck.Modern, "JSONRPCResultResponse", ack)
}
