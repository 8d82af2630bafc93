package translate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
)

// Lenient decode, strict encode: what a proxy forwards must come out byte for
// byte as it came in, modulo insignificant whitespace — member order, key
// spelling (escapes included), number spelling, string escapes, unknown
// members, unknown content types, structuredContent and vendor _meta keys.

// exoticResult is a CallToolResult no schema fully describes: every content
// type of 2025-11-25 plus one from the future, odd number and string
// spellings, escaped keys, unknown members at every level, a vendor _meta key,
// and the 2026 resultType first (the legacy side drops it).
const exoticResult = `{ "resultType" : "complete",
  "zeta": {"nested": [1, 2.50, -0, 1e3, 12345678901234567890]},
  "content": [
    {"type": "text", "text": "caf\u00e9 \u003cb\u003e & \ud83d\ude00 \"q\"", "annotations": {"audience": ["user"], "x-vendor": true}},
    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    {"type": "resource_link", "uri": "file:///a%20b.txt", "name": "a b", "size": 12},
    {"type": "resource", "resource": {"uri": "mem://x", "mimeType": "application/octet-stream", "blob": "AA=="}},
    {"type": "x-hologram", "frames": [{"t": 0.0}], "_meta": {"com.example/render": "v2"}}
  ],
  "structuredContent": {"answer": 42, "ratio": 0.10, "tags": [], "empty": {}, "nul": null, "\u0061lpha": "escaped key"},
  "isError": false,
  "_meta": {"com.example/trace": {"id": "abc", "spans": [1,2]}, "progressToken": 7},
  "aUnknownTopLevel": [true, false, null]
}`

// compact is json.Compact, failing the test on invalid JSON.
func compact(t *testing.T, s []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, s); err != nil {
		t.Fatalf("compact %s: %v", s, err)
	}
	return b.String()
}

// without removes the first occurrence of member (compact text) from the
// compact form of obj.
func without(t *testing.T, obj, member string) string {
	t.Helper()
	c := compact(t, []byte(obj))
	if !strings.Contains(c, member) {
		t.Fatalf("%s does not contain %s", c, member)
	}
	return strings.Replace(c, member, "", 1)
}

func TestForwardResultByteFaithful(t *testing.T) {
	v := schemacheck.Load(t)
	want := without(t, exoticResult, `"resultType":"complete",`)

	got, err := ResultToLegacy([]byte(exoticResult))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("ResultToLegacy is not byte-faithful:\n got %s\nwant %s", got, want)
	}

	// tasks/result: the same bytes, with only the related-task key appended
	// to the existing _meta (L-34, L-44).
	p, err := PayloadToLegacy([]byte(exoticResult), "T-1")
	if err != nil {
		t.Fatal(err)
	}
	wantPayload := strings.Replace(want, `"progressToken":7}`, `"progressToken":7,"io.modelcontextprotocol/related-task":{"taskId":"T-1"}}`, 1)
	// p.Raw, not json.Marshal(p): encoding/json re-escapes <, > and & in any
	// MarshalJSON output (equal JSON, different bytes).
	pb := p.Raw
	if string(pb) != wantPayload {
		t.Fatalf("PayloadToLegacy is not byte-faithful:\n got %s\nwant %s", pb, wantPayload)
	}
	v.Check(t, schemacheck.Legacy, "GetTaskPayloadResult", pb)

	// The reverse trip: a legacy upstream's tasks/result response (with
	// related-task meta) becomes the inline result of a modern tasks/get; only
	// the related-task key goes.
	resp := `{"jsonrpc":"2.0","id":9,"result":` + wantPayload + `}`
	out, err := LegacyOutcomeFromResponse([]byte(resp))
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Result) != want {
		t.Fatalf("LegacyOutcomeFromResponse is not byte-faithful:\n got %s\nwant %s", out.Result, want)
	}
	get := `{"taskId":"T-1","status":"completed","createdAt":"2026-09-01T10:00:00Z","lastUpdatedAt":"2026-09-01T10:00:01Z","ttl":null}`
	g, err := GetTaskResultToModern([]byte(get), &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := modern.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(gb, []byte(`"result":`+want)) {
		t.Fatalf("modern tasks/get does not inline the result byte for byte:\n%s\nwant result %s", gb, want)
	}
	v.Check(t, schemacheck.Ext, "GetTaskResult", gb)

	// A task synthesized from a synchronous answer keeps the bytes too.
	d, err := SynthesizeTask("T-2", []byte(exoticResult), FixedClock(mustTime(defaultNow)), nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Result) != compact(t, []byte(exoticResult)) {
		t.Fatalf("SynthesizeTask changed the result:\n got %s\nwant %s", d.Result, compact(t, []byte(exoticResult)))
	}
}

func TestForwardToolsListByteFaithful(t *testing.T) {
	v := schemacheck.Load(t)
	in := `{"resultType":"complete","tools":[
	  {"name":"b\u00fcild","title":"Build","inputSchema":{"type":"object","properties":{"ref":{"type":"string","x-mcp-header":"Ref"}},"$defs":{}},
	   "outputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"x-vendor":1.50},"icons":[{"src":"data:,"}],"_meta":{"com.example/k":"v"},"zUnknown":{}},
	  {"name":"plain","inputSchema":{"type":"object"},"execution":{"x-future":"keep"}}
	 ],"nextCursor":"c\u002F1","ttlMs":60000,"cacheScope":"public","_meta":{"com.example/list":true}}`
	got, err := ToolsListToLegacy([]byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := compact(t, []byte(in))
	for _, cut := range []string{`"resultType":"complete",`, `,"ttlMs":60000,"cacheScope":"public"`} {
		want = strings.Replace(want, cut, "", 1)
	}
	want = strings.Replace(want, `"zUnknown":{}}`, `"zUnknown":{},"execution":{"taskSupport":"optional"}}`, 1)
	want = strings.Replace(want, `"execution":{"x-future":"keep"}`, `"execution":{"x-future":"keep","taskSupport":"optional"}`, 1)
	if string(got) != want {
		t.Fatalf("ToolsListToLegacy is not byte-faithful:\n got %s\nwant %s", got, want)
	}
	v.Check(t, schemacheck.Legacy, "ListToolsResult", got)
}

func TestForwardRequestByteFaithful(t *testing.T) {
	// A legacy tools/call with unknown params members and odd spellings: only
	// "task" and the related-task key go, _meta gets the 2026 fields appended.
	in := `{"name":"build","arguments":{"n":1.0,"s":"\u003c\u003e","z":null},"task":{"ttl":1000},"x-ext":[1],
	  "_meta":{"progressToken":"p","io.modelcontextprotocol/related-task":{"taskId":"T"},"com.example/k":{"b":2,"a":1}}}`
	u, err := RequestToModern(legacy.MethodToolsCall, []byte(in), bridgeMeta(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"build","arguments":{"n":1.0,"s":"\u003c\u003e","z":null},"x-ext":[1],` +
		`"_meta":{"progressToken":"p","com.example/k":{"b":2,"a":1},"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"tasksbridge","version":"test"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`
	if string(u.Params) != want {
		t.Fatalf("forwarded params lost member order or spelling, or kept task/related-task (M-34, L-37):\n got %s\nwant %s", u.Params, want)
	}
}
