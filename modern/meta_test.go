package modern

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

var bridgeInfo = &Implementation{Name: "bridge", Version: "1.0.0"}

func TestRequestMetaRoundTrip(t *testing.T) {
	in := `{"name":"hello_world","arguments":{},"_meta":{
	  "io.modelcontextprotocol/protocolVersion":"2026-07-28",
	  "io.modelcontextprotocol/clientInfo":{"name":"bridge","version":"1.0.0","title":"Bridge","websiteUrl":"https://example.com"},
	  "io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}},"vendor":{"x":1}},
	  "io.modelcontextprotocol/logLevel":"info",
	  "progressToken":"p-1",
	  "traceparent":"00-abc-def-01"}}`
	m, err := DecodeRequestMeta([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.ProtocolVersion != ProtocolVersion || !m.TasksDeclared() || m.LogLevel != LogInfo ||
		string(m.ProgressToken) != `"p-1"` || m.ClientInfo.Title != "Bridge" {
		t.Errorf("decoded %+v", m)
	}
	if string(m.Other["traceparent"]) != `"00-abc-def-01"` {
		t.Errorf("passthrough key lost: %v", m.Other)
	}
	if string(m.ClientCapabilities.Extra["vendor"]) != `{"x":1}` {
		t.Errorf("unknown capability lost: %v", m.ClientCapabilities.Extra)
	}
	if !m.ClientCapabilities.SupportsElicitationForm() || m.ClientCapabilities.SupportsElicitationURL() || m.ClientCapabilities.SupportsSampling() {
		t.Errorf("capability helpers wrong: %+v", m.ClientCapabilities)
	}
	b := mustMarshal(t, m)
	schema(t, schemacheck.Modern, "RequestMetaObject", b)
	back, err := DecodeRequestMetaObject(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mustMarshal(t, back), b) {
		t.Errorf("unstable round trip:\n%s\n%s", mustMarshal(t, back), b)
	}
}

// M-37: a missing required _meta key is -32602 naming the key.
func TestRequestMetaValidate(t *testing.T) {
	caps := ClientCapabilities{}
	cases := []struct {
		name string
		m    RequestMeta
		want []string
	}{
		{"no version", RequestMeta{ClientCapabilities: &caps}, []string{`missing required _meta field "io.modelcontextprotocol/protocolVersion"`}},
		{"no capabilities", RequestMeta{ProtocolVersion: ProtocolVersion}, []string{`missing required _meta field "io.modelcontextprotocol/clientCapabilities"`, "use {} for none"}},
		{"bad level", RequestMeta{ProtocolVersion: ProtocolVersion, ClientCapabilities: &caps, LogLevel: "verbose"}, []string{`unknown level "verbose"`}},
		{"bad progress token", RequestMeta{ProtocolVersion: ProtocolVersion, ClientCapabilities: &caps, ProgressToken: json.RawMessage(`1.5`)}, []string{`"progressToken" must be a string or an integer`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantErr(t, c.m.Validate(), rpc.CodeInvalidParams, c.want...) })
	}
	// Absent params / _meta decode to an empty meta that fails Validate.
	for _, p := range []string{``, `null`, `{}`, `{"_meta":null}`} {
		m, err := DecodeRequestMeta([]byte(p))
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		wantErr(t, m.Validate(), rpc.CodeInvalidParams, "protocolVersion")
	}
	// An empty capabilities object is valid ("no optional capabilities").
	m, err := DecodeRequestMeta([]byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`))
	if err != nil || m.Validate() != nil || m.TasksDeclared() {
		t.Errorf("empty caps: %+v %v", m, err)
	}
}

func TestDecodeRequestMetaErrors(t *testing.T) {
	cases := []struct {
		in   string
		code int64
		want string
	}{
		{`{"_meta":`, rpc.CodeParseError, "Parse error"},
		{`[1]`, rpc.CodeInvalidParams, "must be a JSON object"},
		{`{"_meta":[]}`, rpc.CodeInvalidParams, `field "_meta" must be a JSON object`},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}}`, rpc.CodeInvalidParams, `"_meta.io.modelcontextprotocol/protocolVersion" must be a string`},
		{`{"_meta":{"io.modelcontextprotocol/clientCapabilities":true}}`, rpc.CodeInvalidParams, `"_meta.io.modelcontextprotocol/clientCapabilities" must be a JSON object`},
		{`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":[]}}}`, rpc.CodeInvalidParams, `"_meta.io.modelcontextprotocol/clientCapabilities.extensions" must be a JSON object`},
		{`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":true}}}}`, rpc.CodeInvalidParams, `"_meta.io.modelcontextprotocol/clientCapabilities.extensions.io.modelcontextprotocol/tasks" must be an object`},
		{`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":1}}}`, rpc.CodeInvalidParams, `clientCapabilities.roots" must be an object`},
		{`{"_meta":{"io.modelcontextprotocol/clientInfo":"bridge"}}`, rpc.CodeInvalidParams, `clientInfo" must be a JSON object`},
		{`{"_meta":{"io.modelcontextprotocol/logLevel":3}}`, rpc.CodeInvalidParams, `logLevel" must be a string`},
		{`{"_meta":{"progressToken":{}}}`, rpc.CodeInvalidParams, `"_meta.progressToken" must be a string or an integer`},
	}
	for _, c := range cases {
		_, err := DecodeRequestMeta([]byte(c.in))
		wantErr(t, err, c.code, c.want)
	}
}

// M-01/M-20: stamping merges _meta without touching other fields.
func TestStampRequestMeta(t *testing.T) {
	caps := TasksCapabilities()
	caps.Elicitation = &Object{"form": json.RawMessage(`{}`)}
	meta := NewRequestMeta(caps, bridgeInfo)
	meta.LogLevel = LogWarning

	orig := `{"name":"build","arguments":{"ref":"main","html":"<b>&</b>"},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2025-11-25","com.example/x":"y"}}`
	p, err := StampRequestMeta([]byte(orig), meta)
	if err != nil {
		t.Fatal(err)
	}
	schema(t, schemacheck.Modern, "CallToolRequestParams", p)
	if !strings.Contains(string(p), `"html":"<b>&</b>"`) {
		t.Errorf("arguments re-encoded: %s", p)
	}
	var got struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      map[string]json.RawMessage
	}
	got.Meta = map[string]json.RawMessage{}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(p, &all); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(all["_meta"], &got.Meta)
	if string(got.Meta[MetaKeyProtocolVersion]) != `"2026-07-28"` {
		t.Errorf("version not replaced: %s", got.Meta[MetaKeyProtocolVersion])
	}
	if string(got.Meta["progressToken"]) != "7" || string(got.Meta["com.example/x"]) != `"y"` {
		t.Errorf("existing keys lost: %v", got.Meta)
	}
	m, err := DecodeRequestMeta(p)
	if err != nil || !m.TasksDeclared() || m.LogLevel != LogWarning || m.ClientInfo.Name != "bridge" {
		t.Errorf("stamped meta: %+v %v", m, err)
	}

	// Absent params.
	for _, in := range []string{``, `null`} {
		p, err := StampRequestMeta([]byte(in), meta)
		if err != nil {
			t.Fatal(err)
		}
		schema(t, schemacheck.Modern, "RequestParams", p)
	}
	// Incomplete merged meta is refused.
	_, err = StampRequestMeta([]byte(`{}`), RequestMeta{ProtocolVersion: ProtocolVersion})
	wantErr(t, err, rpc.CodeInternalError, "clientCapabilities")
	// Broken params.
	_, err = StampRequestMeta([]byte(`[]`), meta)
	wantErr(t, err, rpc.CodeInvalidParams, "must be a JSON object")
	_, err = StampRequestMeta([]byte(`{"_meta":5}`), meta)
	wantErr(t, err, rpc.CodeInvalidParams, `"_meta" must be an object`)
	_, err = StampRequestMeta([]byte(`{`), meta)
	wantErr(t, err, rpc.CodeParseError)
}

func TestClientCapabilities(t *testing.T) {
	var c ClientCapabilities
	if c.HasTasksExtension() {
		t.Error("zero caps declare nothing")
	}
	c.AddExtension(TasksExtensionID, nil)
	b := mustMarshal(t, c)
	if string(b) != `{"extensions":{"io.modelcontextprotocol/tasks":{}}}` {
		t.Errorf("tasks caps = %s", b)
	}
	schema(t, schemacheck.Modern, "ClientCapabilities", b)
	if string(mustMarshal(t, TasksCapabilities())) != string(b) {
		t.Error("TasksCapabilities differs")
	}
	// Legacy "tasks" capability does not declare the extension (M-66).
	legacy, err := DecodeClientCapabilities([]byte(`{"tasks":{"requests":{"tools":{"call":{}}}},"roots":{},"sampling":{"tools":{}},"elicitation":{"url":{}},"experimental":{"x":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if legacy.HasTasksExtension() {
		t.Error("legacy tasks capability must not count (M-66)")
	}
	if !legacy.SupportsRoots() || !legacy.SupportsSampling() || !legacy.SupportsElicitationURL() || legacy.SupportsElicitationForm() {
		t.Errorf("helpers: %+v", legacy)
	}
	lb := mustMarshal(t, legacy)
	schema(t, schemacheck.Modern, "ClientCapabilities", lb)
	jsonEqual(t, lb, []byte(`{"tasks":{"requests":{"tools":{"call":{}}}},"roots":{},"sampling":{"tools":{}},"elicitation":{"url":{}},"experimental":{"x":{}}}`))
	// Bare elicitation {} means form (2025-11-25 compatibility).
	e, _ := DecodeClientCapabilities([]byte(`{"elicitation":{}}`))
	if !e.SupportsElicitationForm() {
		t.Error("elicitation {} must mean form")
	}
}

func TestServerCapabilitiesAndDiscover(t *testing.T) {
	var caps ServerCapabilities
	caps.Tools = &Object{}
	caps.AddExtension(TasksExtensionID, nil)
	d := DiscoverResult{
		SupportedVersions: []string{ProtocolVersion},
		Capabilities:      caps,
		Instructions:      "Use build for builds.",
		TTLMs:             3600000,
		CacheScope:        CachePublic,
		ServerInfo:        &Implementation{Name: "S", Version: "1"},
	}
	b := mustMarshal(t, d)
	schema(t, schemacheck.Modern, "DiscoverResult", b)
	resp, err := EncodeResult(sid("d1"), d)
	if err != nil {
		t.Fatal(err)
	}
	schema(t, schemacheck.Modern, "DiscoverResultResponse", resp)
	jsonEqual(t, b, []byte(`{"resultType":"complete","supportedVersions":["2026-07-28"],
	  "capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},
	  "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S","version":"1"}},
	  "instructions":"Use build for builds.","ttlMs":3600000,"cacheScope":"public"}`))
	back, err := DecodeDiscoverResult(b)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Capabilities.HasTasksExtension() || !back.SupportsVersion(ProtocolVersion) || back.ServerInfo.Name != "S" {
		t.Errorf("decoded %+v", back)
	}
	jsonEqual(t, mustMarshal(t, back), b)

	// Lenient: top-level serverInfo of older servers, missing cache fields.
	old, err := DecodeDiscoverResult([]byte(`{"supportedVersions":["2026-07-28"],"capabilities":{"tasks":{"list":{}}},"serverInfo":{"name":"Old","version":"0"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if old.ServerInfo == nil || old.ServerInfo.Name != "Old" || old.Extra != nil {
		t.Errorf("fallback serverInfo: %+v", old)
	}
	if old.Capabilities.HasTasksExtension() {
		t.Error("legacy tasks capability is not the extension (M-66)")
	}
	// Strict encode.
	for name, c := range map[string]DiscoverResult{
		"no versions":  {TTLMs: 1, CacheScope: CachePublic},
		"negative ttl": {SupportedVersions: []string{ProtocolVersion}, TTLMs: -1, CacheScope: CachePublic},
		"bad scope":    {SupportedVersions: []string{ProtocolVersion}, CacheScope: "shared"},
		// M-66: never advertise the legacy tasks capability under 2026.
		"legacy tasks": {SupportedVersions: []string{ProtocolVersion}, CacheScope: CachePublic,
			Capabilities: ServerCapabilities{Extra: map[string]json.RawMessage{"tasks": json.RawMessage(`{"list":{}}`)}}},
	} {
		_, err := json.Marshal(c)
		if err == nil {
			t.Errorf("%s: encoded", name)
		}
		wantErr(t, err, rpc.CodeInternalError, "DiscoverResult")
	}
	_, err = DecodeDiscoverResult([]byte(`{"resultType":"task"}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"resultType" is "task"`)
	_, err = DecodeDiscoverResult([]byte(`{"capabilities":{"extensions":{"a":1}}}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"capabilities.extensions.a" must be an object`)
	_, err = DecodeDiscoverResult([]byte(`{"_meta":{"io.modelcontextprotocol/serverInfo":[]}}`))
	wantErr(t, err, rpc.CodeInvalidParams, `serverInfo" must be a JSON object`)
}

func TestCheckProtocolVersion(t *testing.T) {
	if err := CheckProtocolVersion(ProtocolVersion, []string{ProtocolVersion}); err != nil {
		t.Fatal(err)
	}
	err := CheckProtocolVersion("2025-11-25", []string{ProtocolVersion})
	wantErr(t, err, rpc.CodeUnsupportedProtocolVersion, `"2025-11-25"`, `"2026-07-28"`)
	d, ok := UnsupportedVersionOf(rpc.As(err))
	if !ok || d.Requested != "2025-11-25" || len(d.Supported) != 1 {
		t.Errorf("data = %+v %v", d, ok)
	}
}

// A proxy forwards params it does not own byte for byte: stamping _meta and
// building an MRTR retry keep member order, key spelling and value bytes
// (only whitespace may change); stamped keys replace in place, new ones are
// appended.
func TestStampAndRetryKeepOrderAndBytes(t *testing.T) {
	in := `{"name":"b\u00fcild", "arguments":{"z":1.0,"a":"\u003c&\u003e"}, "_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"old","com.example/k":{"b":2,"a":1}}, "x-ext":[1e3]}`
	meta := NewRequestMeta(TasksCapabilities(), &Implementation{Name: "b", Version: "1"})
	got, err := StampRequestMeta([]byte(in), meta)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"b\u00fcild","arguments":{"z":1.0,"a":"\u003c&\u003e"},"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","com.example/k":{"b":2,"a":1},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}},"x-ext":[1e3]}`
	if string(got) != want {
		t.Fatalf("StampRequestMeta:\n got %s\nwant %s", got, want)
	}
	retry, err := RetryParams(got, InputResponses{"k": json.RawMessage(`{"action":"cancel"}`)}, json.RawMessage(`"s\u003c1"`))
	if err != nil {
		t.Fatal(err)
	}
	wantRetry := strings.TrimSuffix(want, "}") + `,"inputResponses":{"k":{"action":"cancel"}},"requestState":"s\u003c1"}`
	if string(retry) != wantRetry {
		t.Fatalf("RetryParams:\n got %s\nwant %s", retry, wantRetry)
	}
	// A later round drops the earlier round's inputResponses and
	// requestState (M-18: no requestState when the server sent none).
	again, err := RetryParams(retry, InputResponses{"k2": json.RawMessage(`{"roots":[]}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if wantAgain := strings.TrimSuffix(want, "}") + `,"inputResponses":{"k2":{"roots":[]}}}`; string(again) != wantAgain {
		t.Fatalf("RetryParams round 2:\n got %s\nwant %s", again, wantAgain)
	}
}

// preparedMetas are the metas the prepared-stamp equivalence tests stamp:
// complete ones (the fast path's premise) and broken ones (always the full
// path, whose error must come back unchanged).
func preparedMetas() []RequestMeta {
	caps := TasksCapabilities()
	caps.Elicitation = &Object{"form": json.RawMessage(`{}`)}
	plain := NewRequestMeta(TasksCapabilities(), bridgeInfo)
	logged := NewRequestMeta(caps, bridgeInfo)
	logged.LogLevel = LogWarning
	token := NewRequestMeta(TasksCapabilities(), nil)
	token.ProgressToken = json.RawMessage(`"tb-progress-1"`)
	other := NewRequestMeta(TasksCapabilities(), bridgeInfo)
	other.Other = map[string]json.RawMessage{"traceparent": json.RawMessage(`"00-a"`), "com.example/<k>": json.RawMessage(`{ "a" : [1, 2] }`)}
	badLevel := NewRequestMeta(TasksCapabilities(), bridgeInfo)
	badLevel.LogLevel = "loud"
	badToken := NewRequestMeta(TasksCapabilities(), bridgeInfo)
	badToken.ProgressToken = json.RawMessage(`true`)
	return []RequestMeta{plain, logged, token, other, {}, {ProtocolVersion: ProtocolVersion}, badLevel, badToken,
		{ProgressToken: json.RawMessage(`"p"`)}}
}

// preparedParams are request params around every branch of the fast path's
// premise: no _meta, an _meta without per-request keys, a progressToken of
// every shape, per-request keys (escaped too), duplicates, and broken input.
var preparedParams = []string{
	``, `null`, ` null `, `{}`, ` { "name" : "x" } `, `{"name":"x","arguments":{"a":"<&>","n":1.50}}`,
	`{"_meta":null,"name":"x"}`, `{"name":"x","_meta":{}}`, `{"_meta":{"progressToken":7}}`,
	`{"_meta":{"progressToken":"t"}}`, `{"_meta":{"progressToken":true}}`, `{"_meta":{"progressToken":null}}`,
	`{"_meta":{"progressToken":1.5}}`, `{"_meta":{"progressToken":9007199254740993}}`, `{"_meta":{"progressToken": 8 }}`,
	`{"_meta":{"traceparent":"00-b"}}`, `{"_meta":{"traceparent":"00-b","progressToken":"t","x":{ "y" : 1 }}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`,
	`{"_meta":{"io.modelcontextprotocol/logLevel":"loud"}}`, `{"_meta":{"io.modelcontextprotocol/logLevel":"info"}}`,
	`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`, `{"_meta":{"io.modelcontextprotocol/clientInfo":7}}`,
	`{"_meta":{"\u0070rogressToken":"x"}}`, `{"_meta":{"\u0070rogressToken":false}}`, `{"_meta":{"com.example/\u003ck>":1}}`,
	`{"_meta":{"a":1,"a":2}}`, `{"_meta":{"x":1},"_meta":{"y":2}}`, `{"_meta":{"x":1},"_meta":null}`,
	`{"name":"x","_meta":{"com.example/k":{ "n" : [1, 2] }}, "z":3}`, `{"_meta":1}`, `{"_meta":[]}`, `{"_meta":"x"}`,
	`[]`, `7`, `"s"`, `{"x":`, `{"_meta":{"progressToken":"t"`, "{\"a\":\"\xff\"}",
}

// checkPreparedSame fails unless StampPreparedMeta(params) is exactly
// StampRequestMeta(params): same bytes, or same code and message.
func checkPreparedSame(t *testing.T, params []byte, meta RequestMeta, p *PreparedMeta) {
	t.Helper()
	want, wantErr := StampRequestMeta(params, meta)
	got, gotErr := StampPreparedMeta(params, p)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("params %q meta %+v: full path err %v, prepared err %v", params, meta, wantErr, gotErr)
	}
	if wantErr != nil {
		w, g := rpc.As(wantErr), rpc.As(gotErr)
		if w.Code != g.Code || w.Message != g.Message || !reflect.DeepEqual(w.Data, g.Data) {
			t.Fatalf("params %q: errors differ:\nfull     %d %s\nprepared %d %s", params, w.Code, w.Message, g.Code, g.Message)
		}
		return
	}
	if string(want) != string(got) {
		t.Fatalf("params %q: stamped params differ:\nfull     %s\nprepared %s", params, want, got)
	}
}

func TestStampPreparedMetaMatchesFullPath(t *testing.T) {
	for mi, meta := range preparedMetas() {
		p := PrepareRequestMeta(meta)
		if got := p.Meta(); !reflect.DeepEqual(got, meta) {
			t.Fatalf("meta %d: Meta() = %+v, want %+v", mi, got, meta)
		}
		for _, params := range preparedParams {
			checkPreparedSame(t, []byte(params), meta, p)
		}
	}
}

// TestStampPreparedMetaTakesFastPath pins which inputs the fast path serves,
// so the equivalence test above compares two different code paths rather
// than the full path with itself.
func TestStampPreparedMetaTakesFastPath(t *testing.T) {
	metas := preparedMetas()
	for _, tc := range []struct {
		meta   int
		params string
		fast   bool
	}{
		{0, `{"name":"x","arguments":{}}`, true},
		{0, ``, true},
		{0, `{"_meta":null}`, true},
		{0, `{"_meta":{"progressToken":7,"traceparent":"t"}}`, true},
		{0, `{"_meta":{"\u0070rogressToken":"x"}}`, true},
		{3, `{"_meta":{"x":1}}`, true},
		{0, `{"_meta":{"progressToken":true}}`, false},
		{0, `{"_meta":{"progressToken":null}}`, false},
		{2, `{"_meta":{"progressToken":7}}`, false},
		{3, `{"_meta":{"traceparent":"t"}}`, false},
		{0, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`, false},
		{0, `{"_meta":{"io.modelcontextprotocol/logLevel":"info"}}`, false},
		{4, `{}`, false},
		{6, `{}`, false},
		{7, `{}`, false},
	} {
		p := PrepareRequestMeta(metas[tc.meta])
		_, metaMs, err := splitParamsMeta([]byte(tc.params))
		if err != nil {
			t.Fatalf("%s: %v", tc.params, err)
		}
		if fast := p.ok && p.disjoint(metaMs); fast != tc.fast {
			t.Errorf("meta %d params %s: fast path %v, want %v", tc.meta, tc.params, fast, tc.fast)
		}
	}
}

// TestStampPreparedMetaAllocs bounds the fast path's allocations for a
// typical legacy tools/call (it stamps every forwarded request), so that a
// change which re-encodes or re-validates the meta per call shows here.
func TestStampPreparedMetaAllocs(t *testing.T) {
	meta := NewRequestMeta(TasksCapabilities(), bridgeInfo)
	meta.LogLevel = LogInfo
	p := PrepareRequestMeta(meta)
	for _, tc := range []struct {
		params string
		max    float64
	}{
		// The params' members and keys, their dedup, the output buffer.
		{`{"name":"echo","arguments":{"text":"hello"}}`, 10},
		// Plus the _meta's members, the merged _meta and the token's check.
		{`{"name":"echo","arguments":{"text":"hello"},"_meta":{"progressToken":"t-1"}}`, 24},
	} {
		params := []byte(tc.params)
		if raceBuild {
			tc.max += 10 // encoding/json's pooled scanners, now and then
		}
		full := testing.AllocsPerRun(100, func() { _, _ = StampRequestMeta(params, meta) })
		fast := testing.AllocsPerRun(100, func() { _, _ = StampPreparedMeta(params, p) })
		t.Logf("%s: %.0f allocs prepared, %.0f full", tc.params, fast, full)
		if fast > tc.max {
			t.Errorf("%s: StampPreparedMeta allocates %.0f times per call, want ≤ %.0f (full path: %.0f)", tc.params, fast, tc.max, full)
		}
		if fast*4 > full {
			t.Errorf("%s: StampPreparedMeta allocates %.0f times, the full path %.0f: is the meta encoded per call again?", tc.params, fast, full)
		}
	}
}
