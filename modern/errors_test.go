package modern

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// allConstructors returns one error from every exported constructor.
func allConstructors() map[string]*rpc.Error {
	caps := ClientCapabilities{Sampling: &Object{}}
	return map[string]*rpc.Error{
		"MissingRequiredClientCapability": ErrMissingRequiredClientCapability(caps, "tools/call of summarize"),
		"TasksExtensionRequired":          ErrTasksExtensionRequired(MethodTasksGet),
		"UnsupportedProtocolVersion":      ErrUnsupportedProtocolVersion("2025-11-25", []string{ProtocolVersion}),
		"UnsupportedProtocolVersionNil":   ErrUnsupportedProtocolVersion("", nil),
		"HeaderMismatch":                  ErrHeaderMismatch(HeaderName, "foo", "bar"),
		"HeaderMissing":                   ErrHeaderMissing(HeaderName, "t-1"),
		"HeaderMissingNoBody":             ErrHeaderMissing(HeaderProtocolVersion, ""),
		"HeaderInvalid":                   ErrHeaderInvalid(HeaderName, "=?base64?!?=", "bad base64"),
		"TaskNotFound":                    ErrTaskNotFound("t-1"),
		"MethodNotFound":                  ErrMethodNotFound("foo/bar"),
		"TasksResultRemoved":              ErrMethodNotFound(MethodTasksResult),
		"TasksListRemoved":                ErrMethodNotFound(MethodTasksList),
		"InitializeRemoved":               ErrMethodNotFound("initialize"),
	}
}

// M-45: no constructor emits -32003 or any code of the
// implementation-defined block -32000..-32019.
func TestNoConstructorEmitsDraftCodes(t *testing.T) {
	allowed := map[int64]bool{
		rpc.CodeInvalidParams: true, rpc.CodeMethodNotFound: true, rpc.CodeHeaderMismatch: true,
		rpc.CodeMissingRequiredClientCapability: true, rpc.CodeUnsupportedProtocolVersion: true,
	}
	for name, e := range allConstructors() {
		if e.Code == CodeDraftMissingCapability || (e.Code >= -32019 && e.Code <= -32000) {
			t.Errorf("%s emits %d, a code 2026-07-28 forbids", name, e.Code)
		}
		if !allowed[e.Code] {
			t.Errorf("%s emits unexpected code %d", name, e.Code)
		}
		if e.Message == "" || !json.Valid(append([]byte(nil), mustMarshal(t, e)...)) {
			t.Errorf("%s: empty message or invalid JSON", name)
		}
	}
}

// Every error response validates against the matching 2026-07-28 $def.
func TestErrorResponsesSchema(t *testing.T) {
	defs := map[string]string{
		"MissingRequiredClientCapability": "MissingRequiredClientCapabilityError",
		"TasksExtensionRequired":          "MissingRequiredClientCapabilityError",
		"UnsupportedProtocolVersion":      "UnsupportedProtocolVersionError",
		"UnsupportedProtocolVersionNil":   "UnsupportedProtocolVersionError",
		"HeaderMismatch":                  "HeaderMismatchError",
		"HeaderMissing":                   "HeaderMismatchError",
		"HeaderMissingNoBody":             "HeaderMismatchError",
		"HeaderInvalid":                   "HeaderMismatchError",
	}
	for name, e := range allConstructors() {
		b, err := EncodeError(nid(1), e)
		if err != nil {
			t.Fatal(err)
		}
		schema(t, schemacheck.Modern, "JSONRPCErrorResponse", b)
		if def, ok := defs[name]; ok {
			schema(t, schemacheck.Modern, def, b)
		}
		eb := mustMarshal(t, e)
		switch e.Code {
		case rpc.CodeInvalidParams:
			schema(t, schemacheck.Modern, "InvalidParamsError", eb)
		case rpc.CodeMethodNotFound:
			schema(t, schemacheck.Modern, "MethodNotFoundError", eb)
		}
	}
	// An empty string is still a valid id; the zero ID is omitted.
	b, err := EncodeError(sid(""), ErrHeaderMismatch(HeaderMethod, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	schema(t, schemacheck.Modern, "HeaderMismatchError", b)
	noID, _ := EncodeError(jsonrpcZeroID, rpc.Errorf(rpc.CodeParseError, "Parse error"))
	if strings.Contains(string(noID), `"id"`) {
		t.Errorf("zero id must be omitted: %s", noID)
	}
	schema(t, schemacheck.Modern, "JSONRPCErrorResponse", noID)
}

func TestMissingCapabilityData(t *testing.T) {
	e := ErrTasksExtensionRequired(MethodTasksUpdate)
	if string(e.Data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
		t.Errorf("data = %s", e.Data)
	}
	for _, want := range []string{"tasks/update", `"io.modelcontextprotocol/tasks"`, "io.modelcontextprotocol/clientCapabilities", "not remembered"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message %q lacks %q", e.Message, want)
		}
	}
	caps, draft, ok := RequiredCapabilitiesOf(e)
	if !ok || draft || !caps.HasTasksExtension() {
		t.Errorf("RequiredCapabilitiesOf = %+v %v %v", caps, draft, ok)
	}
	// A non-conforming pre-release server's -32003 is recognised on input (M-45).
	pre := &rpc.Error{Code: -32003, Message: "Missing required client capability", Data: e.Data}
	if caps, draft, ok := RequiredCapabilitiesOf(pre); !ok || !draft || !caps.HasTasksExtension() {
		t.Errorf("-32003 not recognised: %v %v", draft, ok)
	}
	for _, bad := range []*rpc.Error{nil, {Code: -32021}, {Code: -32021, Data: json.RawMessage(`{}`)}, {Code: -32602, Data: e.Data}, {Code: -32021, Data: json.RawMessage(`{"requiredCapabilities":[]}`)}} {
		if _, _, ok := RequiredCapabilitiesOf(bad); ok {
			t.Errorf("RequiredCapabilitiesOf(%+v) ok", bad)
		}
	}
	g := ErrMissingRequiredClientCapability(ClientCapabilities{Elicitation: &Object{"form": json.RawMessage(`{}`)}}, "tools/call of ask_name")
	if !strings.Contains(g.Message, `{"elicitation":{"form":{}}}`) || !strings.Contains(string(g.Data), `"requiredCapabilities":{"elicitation":{"form":{}}}`) {
		t.Errorf("generic -32021: %s %s", g.Message, g.Data)
	}
}

func TestErrorMessages(t *testing.T) {
	cases := []struct {
		e    *rpc.Error
		code int64
		want []string
	}{
		{ErrHeaderMismatch(HeaderName, "foo", "bar"), rpc.CodeHeaderMismatch, []string{"Mcp-Name", `"foo"`, `"bar"`}},
		{ErrHeaderMissing(HeaderName, "t-1"), rpc.CodeHeaderMismatch, []string{"Mcp-Name", "missing", `"t-1"`}},
		{ErrUnsupportedProtocolVersion("1999-01-01", []string{"2026-07-28", "2025-11-25"}), rpc.CodeUnsupportedProtocolVersion, []string{`"1999-01-01"`, `"2026-07-28", "2025-11-25"`, "MCP-Protocol-Version"}},
		{ErrTaskNotFound("t-1"), rpc.CodeInvalidParams, []string{"Task not found", `"t-1"`}},
		{ErrMethodNotFound(MethodTasksResult), rpc.CodeMethodNotFound, []string{`"tasks/result"`, "removed in MCP 2026-07-28", "tasks/get"}},
		{ErrMethodNotFound(MethodTasksList), rpc.CodeMethodNotFound, []string{`"tasks/list"`, "removed in MCP 2026-07-28", "no replacement"}},
		{ErrMethodNotFound("ping"), rpc.CodeMethodNotFound, []string{`"ping"`, "does not exist in MCP 2026-07-28"}},
		{ErrMethodNotFound("x/y"), rpc.CodeMethodNotFound, []string{`"x/y"`}},
	}
	for _, c := range cases {
		wantErr(t, c.e, c.code, c.want...)
	}
	// M-60/M-65: unknown and foreign tasks get the same answer.
	if ErrTaskNotFound("abc").Message != ErrTaskNotFound("abc").Message {
		t.Error("task-not-found text must not depend on ownership")
	}
	if data := ErrUnsupportedProtocolVersion("x", nil).Data; string(data) != `{"supported":[],"requested":"x"}` {
		t.Errorf("-32022 data = %s", data)
	}
	long := strings.Repeat("a", 500)
	if m := ErrHeaderMismatch(HeaderName, long, "b").Message; len(m) > 400 {
		t.Errorf("long values must be cut: %d bytes", len(m))
	}
	if _, ok := UnsupportedVersionOf(ErrTaskNotFound("x")); ok {
		t.Error("UnsupportedVersionOf on another code")
	}
}
