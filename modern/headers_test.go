package modern

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// The encoding examples of streamable-http.mdx "Value Encoding" (M-10).
func TestHeaderValueEncoding(t *testing.T) {
	cases := []struct{ in, out string }{
		{"us-west1", "us-west1"},
		{"get_weather", "get_weather"},
		{"file:///projects/myapp/config.json", "file:///projects/myapp/config.json"},
		{"a b", "a b"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"tab\there", "=?base64?dGFiCWhlcmU=?="},
		{"trailing ", "=?base64?dHJhaWxpbmcg?="},
		{"", ""},
	}
	for _, c := range cases {
		if got := EncodeHeaderValue(c.in); got != c.out {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", c.in, got, c.out)
		}
		if NeedsEncoding(c.in) != (c.in != c.out) {
			t.Errorf("NeedsEncoding(%q) inconsistent", c.in)
		}
		back, err := DecodeHeaderValue(c.out)
		if err != nil || back != c.in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", c.out, back, err, c.in)
		}
	}
	// Unpadded base64 is accepted; plain values with tab are legal field values.
	if v, err := DecodeHeaderValue("=?base64?IHBhZGRlZCA?="); err != nil || v != " padded " {
		t.Errorf("unpadded: %q %v", v, err)
	}
	if v, err := DecodeHeaderValue("a\tb"); err != nil || v != "a\tb" {
		t.Errorf("tab: %q %v", v, err)
	}
	for _, bad := range []string{"=?base64?!!!?=", "=?base64?=", "caf\xc3\xa9", "a\nb", "\x00"} {
		_, err := DecodeHeaderValue(bad)
		wantErr(t, err, rpc.CodeHeaderMismatch, "Mcp-Name", "malformed")
	}
	// The markers are case-sensitive: an upper-case prefix is a plain value.
	if v, err := DecodeHeaderValue("=?BASE64?YQ==?="); err != nil || v != "=?BASE64?YQ==?=" {
		t.Errorf("case-sensitive markers: %q %v", v, err)
	}
}

func TestHeaderMap(t *testing.T) {
	h := Header{"mcp-name": {"x"}}
	if h.Get("Mcp-Name") != "x" || h.Get("MCP-NAME") != "x" {
		t.Error("case-insensitive Get")
	}
	h.Set(HeaderName, "y")
	if len(h) != 1 || h["Mcp-Name"][0] != "y" {
		t.Errorf("Set must replace case-variants under the canonical key: %v", h)
	}
	if CanonicalHeaderKey(HeaderProtocolVersion) != "Mcp-Protocol-Version" || CanonicalHeaderKey("mcp-param-region") != "Mcp-Param-Region" {
		t.Error("canonical keys")
	}
	if h.Get("absent") != "" {
		t.Error("absent header")
	}
}

func request(t *testing.T, method string, params string) []byte {
	t.Helper()
	b, err := EncodeRequest(nid(1), method, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const metaJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// M-10, M-32, M-67: which headers a request needs.
func TestRequestHeaders(t *testing.T) {
	cases := []struct {
		method, params string
		name           string // "" = no Mcp-Name
	}{
		{MethodToolsCall, `{"name":"get_weather",` + metaJSON + `}`, "get_weather"},
		{MethodPromptsGet, `{"name":"greet",` + metaJSON + `}`, "greet"},
		{MethodResourcesRead, `{"uri":"file:///x",` + metaJSON + `}`, "file:///x"},
		{MethodTasksGet, `{"taskId":"T-1",` + metaJSON + `}`, "T-1"},
		{MethodTasksUpdate, `{"taskId":"T-1","inputResponses":{},` + metaJSON + `}`, "T-1"},
		{MethodTasksCancel, `{"taskId":"T-1",` + metaJSON + `}`, "T-1"},
		{MethodToolsCall, `{"name":"wetter-für-köln",` + metaJSON + `}`, EncodeHeaderValue("wetter-für-köln")},
		{MethodToolsList, `{` + metaJSON + `}`, ""},
		{MethodDiscover, `{` + metaJSON + `}`, ""},
	}
	for _, c := range cases {
		raw := request(t, c.method, c.params)
		h, err := RequestHeaders(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		if h.Get(HeaderMethod) != c.method || h.Get(HeaderProtocolVersion) != ProtocolVersion || h.Get(HeaderName) != c.name {
			t.Errorf("%s: headers %v", c.method, h)
		}
		if _, has := h["Mcp-Name"]; has != (c.name != "") {
			t.Errorf("%s: Mcp-Name presence %v", c.method, has)
		}
		if err := CheckHeaders(h.Get, raw); err != nil {
			t.Errorf("%s: own headers rejected: %v", c.method, err)
		}
	}
	_, err := RequestHeaders([]byte(`{"jsonrpc":"2.0"}`))
	wantErr(t, err, rpc.CodeInvalidRequest, "method")
}

// M-43, M-67: server-side validation → -32020.
func TestCheckHeaders(t *testing.T) {
	get := request(t, MethodTasksGet, `{"taskId":"T-1",`+metaJSON+`}`)
	call := request(t, MethodToolsCall, `{"name":"Hello, 世界",`+metaJSON+`}`)
	noVersion := request(t, MethodTasksGet, `{"taskId":"T-1","_meta":{}}`)
	noName := request(t, MethodToolsCall, `{`+metaJSON+`}`)
	note, _ := EncodeNotification("notifications/cancelled", json.RawMessage(`{"requestId":1}`))
	ok := Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tasks/get"}, "Mcp-Name": {"T-1"}}
	with := func(k, v string) Header {
		h := Header{}
		for kk, vv := range ok {
			h[kk] = vv
		}
		if v == "" {
			delete(h, CanonicalHeaderKey(k))
		} else {
			h.Set(k, v)
		}
		return h
	}
	cases := []struct {
		name string
		h    Header
		body []byte
		code int64
		want []string
	}{
		{"all good", ok, get, 0, nil},
		{"lower-case names", Header{"mcp-protocol-version": {"2026-07-28"}, "mcp-method": {"tasks/get"}, "mcp-name": {"T-1"}}, get, 0, nil},
		{"Mcp-Name base64", with(HeaderName, "=?base64?VC0x?="), get, 0, nil},
		{"missing Mcp-Name (go-sdk gap)", with(HeaderName, ""), get, rpc.CodeHeaderMismatch, []string{"required Mcp-Name header is missing", `"T-1"`}},
		{"wrong Mcp-Name", with(HeaderName, "T-2"), get, rpc.CodeHeaderMismatch, []string{"Mcp-Name header value \"T-2\" does not match body value \"T-1\""}},
		{"missing Mcp-Method", with(HeaderMethod, ""), get, rpc.CodeHeaderMismatch, []string{"required Mcp-Method header is missing", `"tasks/get"`}},
		{"wrong Mcp-Method", with(HeaderMethod, "tasks/cancel"), get, rpc.CodeHeaderMismatch, []string{`Mcp-Method header value "tasks/cancel" does not match body value "tasks/get"`}},
		{"base64 Mcp-Method is not decoded", with(HeaderMethod, "=?base64?dGFza3MvZ2V0?="), get, rpc.CodeHeaderMismatch, []string{"Mcp-Method"}},
		{"missing version", with(HeaderProtocolVersion, ""), get, rpc.CodeHeaderMismatch, []string{"required MCP-Protocol-Version header is missing", `"2026-07-28"`}},
		{"wrong version", with(HeaderProtocolVersion, "2025-11-25"), get, rpc.CodeHeaderMismatch, []string{`MCP-Protocol-Version header value "2025-11-25" does not match body value "2026-07-28"`}},
		{"bad base64", with(HeaderName, "=?base64?***?="), get, rpc.CodeHeaderMismatch, []string{"Mcp-Name", "not valid base64"}},
		{"raw non-ASCII", Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"Hello, 世界"}}, call, rpc.CodeHeaderMismatch, []string{"Mcp-Name", "outside visible ASCII"}},
		{"encoded non-ASCII", Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64?SGVsbG8sIOS4lueVjA==?="}}, call, 0, nil},
		{"body lacks version: not compared", ok, noVersion, 0, nil},
		{"body lacks version, header missing", with(HeaderProtocolVersion, ""), noVersion, rpc.CodeHeaderMismatch, []string{"required MCP-Protocol-Version header is missing"}},
		{"body lacks name, header present", Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"x"}}, noName, rpc.CodeHeaderMismatch, []string{"no counterpart in the body", "params.name"}},
		{"body lacks name, header absent", Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}}, noName, 0, nil},
		{"notification without headers", Header{}, note, 0, nil},
		{"notification with wrong method", Header{"Mcp-Method": {"x"}}, note, rpc.CodeHeaderMismatch, []string{"Mcp-Method"}},
		{"broken body", ok, []byte(`{`), rpc.CodeParseError, []string{"Parse error"}},
		{"not a request", ok, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), rpc.CodeInvalidRequest, []string{"response"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckHeaders(c.h.Get, c.body)
			if c.code == 0 {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want %d, got nil", c.code)
			}
			wantErr(t, err, c.code, c.want...)
		})
	}
}

func TestParamHeaderValue(t *testing.T) {
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{`"us-west1"`, "us-west1", true},
		{`"Hello, 世界"`, "=?base64?SGVsbG8sIOS4lueVjA==?=", true},
		{`42`, "42", true},
		{`-7`, "-7", true},
		{`true`, "true", true},
		{`false`, "false", true},
		{`null`, "", false},
		{``, "", false},
		{`1.5`, "", false},
		{`{}`, "", false},
	}
	for _, c := range cases {
		got, ok := ParamHeaderValue(json.RawMessage(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("ParamHeaderValue(%s) = %q %v", c.in, got, ok)
		}
	}
	if NameSource(MethodTasksUpdate) != "taskId" || NameSource(MethodResourcesRead) != "uri" || NameSource(MethodToolsList) != "" {
		t.Error("NameSource")
	}
	if !strings.HasPrefix(HeaderParamPrefix+"Region", "Mcp-Param-") {
		t.Error("prefix")
	}
}
