package modernface

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/modern"
)

// Bodies encoding/json reads with case folding or repeated members take
// DetectClientEra's reflective path and keep its answer.
func TestDetectClientEraOddBodies(t *testing.T) {
	h := http.Header{}
	for body, want := range map[string]era.Era{
		`{"jsonrpc":"2.0","id":1,"METHOD":"server/discover"}`:                                                                          era.Modern,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`:   era.Modern,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_META":{"io.modelcontextprotocol/protocolVersion":"x"}}}`:            era.Modern,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"},"_meta":{}}}`: era.Modern,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`:                                                                   era.Legacy,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":null}}`:                                                       era.Legacy,
		`{"jsonrpc":"2.0","id":1,"method":null}`:                                                                                       era.Legacy,
	} {
		if got := DetectClientEra(h, []byte(body)); got != want {
			t.Errorf("%s: era %v, want %v", body, got, want)
		}
	}
}

// leanFit leaves to go-sdk what go-sdk answers differently (pure).
func TestLeanFit(t *testing.T) {
	ok := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	fit := func(h http.Header, method, params string) bool {
		o, split := splitParams([]byte(params))
		return split && leanFit(h, method, []byte(params), o)
	}
	if !fit(ok, "tools/call", `{"name":"echo","arguments":{"a":1},"requestState":"s"}`) {
		t.Fatal("a plain tools/call must be lean")
	}
	for _, c := range []struct {
		h      http.Header
		method string
		params string
	}{
		{http.Header{"Content-Type": {"text/plain"}, "Accept": ok["Accept"]}, "tools/list", `{}`},
		{http.Header{"Content-Type": ok["Content-Type"], "Accept": {"application/json"}}, "tools/list", `{}`},
		{http.Header{"Content-Type": ok["Content-Type"], "Accept": ok["Accept"], "Last-Event-Id": {"1"}}, "tools/list", `{}`},
		{ok, "tools/call", `{"name":5}`},
		{ok, "tools/call", `{"name":"x","requestState":1}`},
		{ok, "tools/call", `{"name":"x","inputResponses":[]}`},
		{ok, "prompts/get", `{"name":"p","arguments":{"a":1}}`},
		{ok, "tools/list", `{"cursor":{}}`},
		{ok, "tools/list", `{"_meta":1}`},
		{ok, "resources/subscribe", `{}`},
	} {
		if fit(c.h, c.method, c.params) {
			t.Errorf("%s %s with %v: lean, want go-sdk", c.method, c.params, c.h)
		}
	}
}

// legacyParams' raw-JSON edit gives what the reflective one gave (up to
// member order), and its errors for what is not a plain object.
func TestLegacyParamsAgreesWithDecoded(t *testing.T) {
	for _, p := range []string{
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":3},"name":"echo","arguments":{"a":[1,{"b":null}]}}`,
		`{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"x"}},"name":"n","arguments":null,"requestState":"s","inputResponses":{}}`,
		`{"_meta":null,"uri":"file:///x"}`,
		`{"name":"dup","name":"last"}`,
		`{}`,
		`null`,
		`[1]`,
		`{"_meta":5}`,
	} {
		got, gerr := legacyParams(json.RawMessage(p), "task")
		want, werr := legacyParamsDecoded(json.RawMessage(p), "task")
		if (gerr == nil) != (werr == nil) || (werr != nil && gerr.Error() != werr.Error()) {
			t.Fatalf("%s: error %v, want %v", p, gerr, werr)
		}
		if werr != nil {
			continue
		}
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: %s, want %s", p, got, want)
		}
	}
}

// A cached _meta decodes to what a fresh decode gives; a failing one is not
// kept and fails with the full decode's words each time (M-37).
func TestRequestMetaCache(t *testing.T) {
	f := &Face{}
	good := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"progressToken":"t"},"name":"x"}`)
	want, err := modern.DecodeRequestMeta(good)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		o, ok := splitParams(good)
		got, err := f.requestMeta(good, o, ok)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("meta %+v, %v; want %+v", got, err, want)
		}
	}
	bad := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	_, werr := modern.DecodeRequestMeta(bad)
	if werr == nil {
		werr = func() error { m, _ := modern.DecodeRequestMeta(bad); return m.Validate() }()
	}
	for range 2 {
		o, ok := splitParams(bad)
		if _, err := f.requestMeta(bad, o, ok); err == nil || err.Error() != werr.Error() {
			t.Fatalf("error %v, want %v", err, werr)
		}
	}
	if n := len(f.metas.m); n != 1 {
		t.Fatalf("%d cached metas, want 1 (failures are not kept)", n)
	}
}

// appendServerInfo adds exactly the _meta a member-wise edit adds (M-41),
// and leaves results that may carry _meta to that edit.
func TestAppendServerInfo(t *testing.T) {
	info := json.RawMessage(`{"name":"tasksbridge","version":"x"}`)
	for _, out := range []string{
		`{"resultType":"complete","content":[{"type":"text","text":"hi"}]}`,
		`{}`,
		`{"resultType":"complete","isError":true}`,
	} {
		got, ok := appendServerInfo(json.RawMessage(out), info)
		if !ok {
			t.Fatalf("%s: not appended", out)
		}
		var g, w map[string]any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: %s is not JSON: %v", out, got, err)
		}
		_ = json.Unmarshal([]byte(out), &w)
		var iv any
		_ = json.Unmarshal(info, &iv)
		w["_meta"] = map[string]any{modern.MetaKeyServerInfo: iv}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: %s", out, got)
		}
	}
	for _, out := range []string{
		`{"_meta":{"a":1},"resultType":"complete"}`,
		`{"\u005fmeta":{},"resultType":"complete"}`,
		`{"text":"mentions _meta"}`,
		`[]`,
	} {
		if _, ok := appendServerInfo(json.RawMessage(out), info); ok {
			t.Fatalf("%s: appended, want the member-wise edit", out)
		}
	}
}
