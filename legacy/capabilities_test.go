package legacy

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// TestServerTasksCapabilityL02L03: leaves are {} objects; the round trip keeps
// unknown members.
func TestServerTasksCapabilityL02L03(t *testing.T) {
	full := ServerTasksCapability{List: true, Cancel: true, ToolsCall: true}
	b := enc(t, full)
	if want := `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	check(t, "ServerCapabilities", []byte(`{"tasks":`+string(b)+`}`))
	if b := enc(t, ServerTasksCapability{}); string(b) != `{}` {
		t.Errorf("empty = %s", b)
	}
	if b := enc(t, ServerTasksCapability{Cancel: true}); string(b) != `{"cancel":{}}` {
		t.Errorf("cancel only = %s (no tasks.requests entry: L-02)", b)
	}

	in := `{"list":{"x":1},"cancel":true,"requests":{"tools":{"call":{}},"resources":{"read":{}}},"vendor":{"y":2}}`
	c, err := DecodeServerTasksCapability([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := ServerTasksCapability{List: true, Cancel: true, ToolsCall: true,
		Extra: map[string]json.RawMessage{"vendor": json.RawMessage(`{"y":2}`)}, RequestsExtra: map[string]json.RawMessage{"resources": json.RawMessage(`{"read":{}}`)}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("decode = %+v\nwant %+v", c, want)
	}
	out := enc(t, c)
	jsonEq(t, out, []byte(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}},"resources":{"read":{}}},"vendor":{"y":2}}`))
	check(t, "ServerCapabilities", []byte(`{"tasks":`+string(out)+`}`))

	for _, tc := range []struct {
		in   string
		want ServerTasksCapability
	}{
		{`{}`, ServerTasksCapability{}},
		{`{"list":false,"cancel":null,"requests":null}`, ServerTasksCapability{}},
		{`{"requests":{"tools":{}}}`, ServerTasksCapability{}},
		{`{"requests":{"tools":null}}`, ServerTasksCapability{}},
	} {
		got, err := DecodeServerTasksCapability([]byte(tc.in))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Decode(%s) = %+v, %v", tc.in, got, err)
		}
	}
	for _, tc := range []struct{ in, frag string }{
		{`{"list":"yes"}`, "capabilities.tasks: list must be an object"},
		{`{"requests":[]}`, "requests must be an object"},
		{`{"requests":{"tools":{"call":1}}}`, "requests.tools.call must be an object"},
		{`[]`, "must be a JSON object"},
	} {
		_, err := DecodeServerTasksCapability([]byte(tc.in))
		wantCode(t, err, rpc.CodeInvalidParams, tc.frag)
	}
	_, err = DecodeServerTasksCapability([]byte(`{`))
	wantCode(t, err, rpc.CodeParseError)
}

func TestClientTasksCapability(t *testing.T) {
	c := ClientTasksCapability{List: true, Cancel: true, SamplingCreateMessage: true, ElicitationCreate: true}
	b := enc(t, c)
	if want := `{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	check(t, "ClientCapabilities", []byte(`{"elicitation":{"form":{}},"sampling":{},"tasks":`+string(b)+`}`))
	got, err := DecodeClientTasksCapability(b)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("round trip = %+v, %v", got, err)
	}
	got, err = DecodeClientTasksCapability([]byte(`{"requests":{"elicitation":{"create":{}},"roots":{"list":{}}},"z":0}`))
	if err != nil || !got.ElicitationCreate || got.SamplingCreateMessage || string(got.RequestsExtra["roots"]) != `{"list":{}}` || string(got.Extra["z"]) != "0" {
		t.Errorf("decode = %+v, %v", got, err)
	}
	_, err = DecodeClientTasksCapability([]byte(`{"requests":{"sampling":{"createMessage":"x"}}}`))
	wantCode(t, err, rpc.CodeInvalidParams, "requests.sampling.createMessage must be an object")
	if _, err := json.Marshal(ClientTasksCapability{Extra: map[string]json.RawMessage{"bad": json.RawMessage(`{`)}}); err == nil {
		t.Error("invalid extra encoded")
	}
}

// TestPatchCapabilitiesKeepsOthers: the raw helpers change only "tasks".
func TestPatchCapabilitiesKeepsOthers(t *testing.T) {
	init := `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}, "logging":{},"tasks":{"list":{}}},"serverInfo":{"name":"up","version":"1.0"},"instructions":"be nice"}`
	check(t, "InitializeResult", []byte(init))
	cur, err := InitializeResultTasks(json.RawMessage(init))
	if err != nil || cur == nil || !cur.List || cur.ToolsCall {
		t.Fatalf("InitializeResultTasks = %+v, %v", cur, err)
	}
	patched, err := PatchInitializeResultTasks(json.RawMessage(init), &ServerTasksCapability{Cancel: true, ToolsCall: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"up","version":"1.0"},"instructions":"be nice"}`
	if string(patched) != want {
		t.Errorf("patched = %s\nwant      %s", patched, want)
	}
	check(t, "InitializeResult", patched)
	removed, err := PatchInitializeResultTasks(patched, nil)
	if err != nil || string(removed) != `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"up","version":"1.0"},"instructions":"be nice"}` {
		t.Errorf("removed = %s, %v", removed, err)
	}
	if c, err := InitializeResultTasks(removed); c != nil || err != nil {
		t.Errorf("tasks after removal = %+v, %v", c, err)
	}
	if v, err := ProtocolVersionOf(removed); err != nil || v != ProtocolVersion {
		t.Errorf("ProtocolVersionOf = %q, %v", v, err)
	}

	params := `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{},"url":{}},"sampling":{}},"clientInfo":{"name":"c","version":"0"}}`
	if c, err := InitializeParamsTasks(json.RawMessage(params)); c != nil || err != nil {
		t.Errorf("client without tasks = %+v, %v (L-11: absence is normal)", c, err)
	}
	withTasks, err := PatchInitializeParamsTasks(json.RawMessage(params), &ClientTasksCapability{ElicitationCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "InitializeRequestParams", withTasks)
	if c, err := InitializeParamsTasks(withTasks); err != nil || c == nil || !c.ElicitationCreate {
		t.Errorf("InitializeParamsTasks = %+v, %v", c, err)
	}
	back, err := PatchInitializeParamsTasks(withTasks, nil)
	if err != nil || string(back) != params {
		t.Errorf("remove = %s, %v; want the original bytes", back, err)
	}

	caps, err := PatchServerTasks(nil, &ServerTasksCapability{List: true})
	if err != nil || string(caps) != `{"tasks":{"list":{}}}` {
		t.Errorf("PatchServerTasks(nil) = %s, %v", caps, err)
	}
	if c, err := ClientTasksFrom(json.RawMessage(`{"tasks":null}`)); c != nil || err != nil {
		t.Errorf("ClientTasksFrom(tasks null) = %v, %v", c, err)
	}
	if c, err := ServerTasksFrom(nil); c != nil || err != nil {
		t.Errorf("ServerTasksFrom(nil) = %v, %v", c, err)
	}
	_, err = PatchClientTasks(json.RawMessage(`[]`), nil)
	wantCode(t, err, rpc.CodeInvalidParams)
	_, err = InitializeResultTasks(json.RawMessage(`{"capabilities":"all"}`))
	wantCode(t, err, rpc.CodeInvalidParams, "capabilities must be an object")
	_, err = InitializeResultTasks(json.RawMessage(`{"capabilities":{"tasks":{"list":3}}}`))
	wantCode(t, err, rpc.CodeInvalidParams, "list must be an object")
	_, err = ProtocolVersionOf(json.RawMessage(`{"protocolVersion":20251125}`))
	wantCode(t, err, rpc.CodeInvalidParams, "protocolVersion must be a string")
}
