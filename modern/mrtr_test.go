package modern

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

func TestInputRequiredResult(t *testing.T) {
	r := InputRequiredResult{
		InputRequests: InputRequests{"github_login": elicitReq, "capital_of_france": samplingReq},
		RequestState:  RequestState("AEAD<blob>&\u2028é"),
	}
	b, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	schema(t, schemacheck.Modern, "InputRequiredResult", b)
	if !strings.Contains(string(b), `"requestState":"AEAD<blob>&`) {
		t.Errorf("requestState HTML-escaped: %s", b)
	}
	back, err := DecodeInputRequiredResult(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(back.RequestState) != string(r.RequestState) {
		t.Errorf("requestState changed: %s vs %s", back.RequestState, r.RequestState)
	}
	if v, ok := back.RequestStateValue(); !ok || v != "AEAD<blob>&\u2028é" {
		t.Errorf("RequestStateValue = %q %v", v, ok)
	}
	if back.InputRequests["github_login"].Kind() != InputElicitation || back.InputRequests["capital_of_france"].Kind() != InputSampling {
		t.Errorf("kinds: %+v", back.InputRequests)
	}
	if back.InputRequests["github_login"].ElicitationMode() != "form" {
		t.Error("mode")
	}
	if rt, _ := ClassifyResult(b, false); rt != ResultInputRequired {
		t.Errorf("classify: %s", rt)
	}

	// Only requestState (load shedding) and only inputRequests are both valid.
	for _, v := range []InputRequiredResult{{RequestState: RequestState("s")}, {InputRequests: InputRequests{"r": rootsReq}}} {
		schema(t, schemacheck.Modern, "InputRequiredResult", mustMarshal(t, v))
	}
	// M-48: at least one of the two.
	_, err = json.Marshal(InputRequiredResult{})
	wantErr(t, err, rpc.CodeInternalError, "at least one of inputRequests and requestState", "M-48")
	_, err = json.Marshal(InputRequiredResult{RequestState: json.RawMessage(`5`)})
	wantErr(t, err, rpc.CodeInternalError, "requestState must be a JSON string")

	// Decode errors and leniency.
	if _, err := DecodeInputRequiredResult([]byte(`{"resultType":"input_required"}`)); err != nil {
		t.Errorf("lenient decode of an empty InputRequiredResult: %v", err)
	}
	_, err = DecodeInputRequiredResult([]byte(`{"resultType":"complete"}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"resultType" is "complete"; want "input_required"`)
	_, err = DecodeInputRequiredResult([]byte(`{"resultType":"input_required","requestState":{}}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"requestState" must be a string`)
	_, err = DecodeInputRequiredResult([]byte(`{"resultType":"input_required","inputRequests":{"a":{"method":5}}}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"inputRequests.a.method" must be a string`)
}

// M-17/M-18: retry = same params + inputResponses + requestState echoed verbatim.
func TestRetryParams(t *testing.T) {
	orig := `{"name":"deploy","arguments":{"env":"prod"},"inputResponses":{"old":{"action":"cancel"}},"requestState":"stale",
	  "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}`
	state := json.RawMessage(`"opaque\u003cstate\u003e"`) // escapes kept as sent
	resp := InputResponses{"github_login": json.RawMessage(`{"action":"accept","content":{"name":"octocat"}}`)}
	p, err := RetryParams([]byte(orig), resp, state)
	if err != nil {
		t.Fatal(err)
	}
	schema(t, schemacheck.Modern, "CallToolRequestParams", p)
	schema(t, schemacheck.Modern, "InputResponseRequestParams", p)
	if !strings.Contains(string(p), `"requestState":"opaque\u003cstate\u003e"`) {
		t.Errorf("requestState not echoed byte-for-byte: %s", p)
	}
	if strings.Contains(string(p), "stale") || strings.Contains(string(p), `"old"`) {
		t.Errorf("previous round leaked: %s", p)
	}
	got, err := DecodeInputResponseParams(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.RequestState) != string(state) || len(got.InputResponses) != 1 || got.Meta.ProtocolVersion != ProtocolVersion {
		t.Errorf("decoded retry: %+v", got)
	}
	// No requestState from the server → none sent (M-18).
	p, err = RetryParams([]byte(orig), resp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(p), "requestState") {
		t.Errorf("requestState must be absent: %s", p)
	}
	_, err = RetryParams([]byte(orig), resp, json.RawMessage(`{}`))
	wantErr(t, err, rpc.CodeInternalError, "requestState must be the raw JSON string")
	_, err = RetryParams([]byte(`[]`), resp, nil)
	wantErr(t, err, rpc.CodeInvalidParams, "must be a JSON object")
	_, err = RetryParams([]byte(`{}`), InputResponses{"a": json.RawMessage(`1`)}, nil)
	wantErr(t, err, rpc.CodeInternalError, `inputResponses["a"]`)
}

func TestDecodeInputResponseParamsErrors(t *testing.T) {
	if p, err := DecodeInputResponseParams(nil); err != nil || p.InputResponses != nil {
		t.Errorf("nil params: %+v %v", p, err)
	}
	_, err := DecodeInputResponseParams([]byte(`{"inputResponses":[]}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"inputResponses" must be a JSON object`)
	_, err = DecodeInputResponseParams([]byte(`{"requestState":1}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"requestState" must be a string`)
	_, err = DecodeInputResponseParams([]byte(`{"_meta":"x"}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"_meta" must be a JSON object`)
}

func TestClassifyInputResponse(t *testing.T) {
	cases := []struct {
		raw    string
		want   InputKind
		action ElicitAction
		code   int64
		msg    string
	}{
		{`{"action":"accept","content":{"name":"Luca"}}`, InputElicitation, ElicitAccept, 0, ""},
		{`{"action":"decline"}`, InputElicitation, ElicitDecline, 0, ""},
		{`{"action":"cancel"}`, InputElicitation, ElicitCancel, 0, ""},
		{`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}`, InputSampling, "", 0, ""},
		{`{"roots":[{"uri":"file:///tmp"}]}`, InputRoots, "", 0, ""},
		{`{"action":"maybe"}`, InputUnknown, "", rpc.CodeInvalidParams, `"action" has unknown value "maybe"`},
		{`{"roots":{}}`, InputUnknown, "", rpc.CodeInvalidParams, `"roots" must be an array`},
		{`{"role":1}`, InputUnknown, "", rpc.CodeInvalidParams, `"role" must be a string`},
		{`{}`, InputUnknown, "", rpc.CodeInvalidParams, "neither an ElicitResult"},
		{`"x"`, InputUnknown, "", rpc.CodeInvalidParams, "must be a JSON object"},
		{`{`, InputUnknown, "", rpc.CodeParseError, "Parse error"},
	}
	for _, c := range cases {
		k, err := ClassifyInputResponse([]byte(c.raw))
		if c.code != 0 {
			wantErr(t, err, c.code, c.msg)
			continue
		}
		if err != nil || k != c.want {
			t.Errorf("%s: %q %v", c.raw, k, err)
		}
		a, ok := ElicitActionOf([]byte(c.raw))
		if ok != (c.want == InputElicitation) || a != c.action {
			t.Errorf("%s: ElicitActionOf = %q %v", c.raw, a, ok)
		}
	}
	// Every valid response above is also a schema InputResponse.
	schema(t, schemacheck.Modern, "InputResponses", mustMarshal(t, InputResponses{
		"e": json.RawMessage(cases[0].raw), "s": json.RawMessage(cases[3].raw), "r": json.RawMessage(cases[4].raw)}))
}

func TestInputRequests(t *testing.T) {
	m := InputRequests{"b": samplingReq, "a": elicitReq, "c": rootsReq}
	if k := m.Keys(); strings.Join(k, ",") != "a,b,c" {
		t.Errorf("Keys = %v", k)
	}
	b := mustMarshal(t, m)
	schema(t, schemacheck.Modern, "InputRequests", b)
	schema(t, schemacheck.Ext, "InputRequests", b)
	back, err := DecodeInputRequests(b)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, mustMarshal(t, back), b)
	// Unknown methods decode (forward compatibility) but do not encode.
	u, err := DecodeInputRequests([]byte(`{"x":{"method":"future/thing"}}`))
	if err != nil || u["x"].Kind() != InputUnknown {
		t.Fatalf("lenient: %+v %v", u, err)
	}
	_, err = json.Marshal(u)
	wantErr(t, err, rpc.CodeInternalError, `"future/thing" is not elicitation/create`)
	_, err = json.Marshal(InputRequests{"e": {Method: MethodElicitationCreate}})
	wantErr(t, err, rpc.CodeInternalError, "params must be an object")
	url := InputRequest{Method: MethodElicitationCreate, Params: json.RawMessage(`{"mode":"url","message":"m","url":"https://x"}`)}
	if url.ElicitationMode() != "url" || samplingReq.ElicitationMode() != "" {
		t.Error("ElicitationMode")
	}
	ir, err := DecodeInputResponses([]byte(`{"k": {"action":"accept"} }`))
	if err != nil || string(ir["k"]) != `{"action":"accept"}` {
		t.Errorf("DecodeInputResponses = %q %v", ir["k"], err)
	}
	_, err = DecodeInputResponses([]byte(`{"k":null}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"k" must be an object`)
}
