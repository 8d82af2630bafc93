package router

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// checkBody's decisions, one row per kind of malformed input seen in the
// field: the code (0 = passes on, 202 = accepted notification), the HTTP
// status, and words the message must contain. No message may name a Go type.
func TestCheckBody(t *testing.T) {
	const (
		pass   = 0
		accept = 202
	)
	L, M := era.Legacy, era.Modern
	call := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
	}
	for _, tc := range []struct {
		name   string
		body   string
		route  bodyRoute
		era    era.Era
		code   int64
		status int
		says   string
	}{
		{"valid request", call("tools/list", `{}`), routeLegacyFace, L, pass, 0, ""},
		{"valid modern request", call("tools/list", `{"_meta":{}}`), routeModernFace, M, pass, 0, ""},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\"}}", routeLegacyFace, L, rpc.CodeParseError, 400, "not valid UTF-8 (first bad byte at offset 61)"},
		{"empty body", "  \n", routeUpstream, L, rpc.CodeParseError, 400, "the body is empty"},
		{"not JSON", "hello", routeUpstream, L, rpc.CodeParseError, 400, "invalid JSON at offset"},
		{"truncated", `{"jsonrpc":"2.0","id":1`, routeUpstream, L, rpc.CodeParseError, 400, "ends before the message is complete"},
		{"trailing garbage", call("tools/list", `{}`) + "garbage", routeLegacyFace, L, rpc.CodeParseError, 400, "unexpected data after the JSON-RPC message"},
		{"two objects", call("tools/list", `{}`) + call("tools/list", `{}`), routeUpstream, M, rpc.CodeParseError, 400, "exactly one JSON value"},
		{"null body", "null", routeUpstream, L, rpc.CodeInvalidRequest, 400, "the body is JSON null"},
		{"empty batch", "[ ]", routeUpstream, L, rpc.CodeInvalidRequest, 400, "empty batch"},
		{"batch to the upstream", "[" + call("ping", `{}`) + "]", routeUpstream, L, rpc.CodeInvalidRequest, 400, "batches are not supported"},
		{"batch, legacy face", "[" + call("ping", `{}`) + "]", routeLegacyFace, L, rpc.CodeInvalidRequest, 400, "batches are not supported by 2025-11-25 or 2026-07-28 (MCP removed JSON-RPC batching in 2025-06-18)"},
		{"batch, modern face", "[" + call("ping", `{}`) + "]", routeModernFace, M, rpc.CodeInvalidRequest, 400, "send each JSON-RPC message in its own POST"},
		{"deep arrays, valid JSON", call("tools/call", `{"name":"echo","arguments":{"a":`+deep("[", "]", 60000)+`}}`), routeLegacyFace, L, rpc.CodeInvalidRequest, 400, "request nesting is deeper than 128 levels"},
		{"deep objects, valid JSON", call("tools/call", `{"name":"echo","arguments":`+deep(`{"a":`, "}", 60000)+`}`), routeModernFace, M, rpc.CodeInvalidRequest, 400, "request nesting is deeper than 128 levels (level 129 opens at offset"},
		{"deep and truncated", `{"a":` + strings.Repeat("[", 200), routeUpstream, L, rpc.CodeInvalidRequest, 400, "request nesting is deeper than 128 levels"},
		{"129 levels", call("tools/call", `{"name":"echo","arguments":{"a":`+deep("[", "]", 126)+`}}`), routeLegacyFace, L, rpc.CodeInvalidRequest, 400, "deeper than 128 levels"},
		{"128 levels", call("tools/call", `{"name":"echo","arguments":{"a":`+deep("[", "]", 125)+`}}`), routeLegacyFace, L, pass, 0, ""},
		{"many members", call("tools/call", `{"name":"echo","arguments":{`+manyNames(5000)+`}}`), routeLegacyFace, L, pass, 0, ""},
		{"many members, one twice", call("tools/call", `{"name":"echo","arguments":{`+manyNames(5000)+`,"n4999":1}}`), routeLegacyFace, L, rpc.CodeInvalidParams, 200, `member "params.arguments.n4999" appears twice`},
		{"number body", "5", routeUpstream, M, rpc.CodeInvalidRequest, 400, "the body is a number (5); send a JSON-RPC request object"},
		{"string body", `"x"`, routeUpstream, L, rpc.CodeInvalidRequest, 400, "a string"},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, routeLegacyFace, L, rpc.CodeInvalidRequest, 200, `member "id" appears twice`},
		{"duplicate param", call("tools/call", `{"name":"a","name":"b"}`), routeLegacyFace, L, rpc.CodeInvalidParams, 200, `member "params.name" appears twice`},
		{"duplicate deep param", call("tools/call", `{"name":"a","task":{"ttl":1,"ttl":2}}`), routeUpstream, M, rpc.CodeInvalidParams, 400, `"params.task.ttl" appears twice`},
		{"duplicate param in a notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"a":1,"a":2}}`, routeLegacyFace, L, accept, 0, ""},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, routeLegacyFace, L, rpc.CodeInvalidRequest, 200, `"jsonrpc" must be "2.0"`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, routeLegacyFace, L, rpc.CodeInvalidRequest, 400, `"id" must be a string or an integer, not null`},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, routeUpstream, M, rpc.CodeInvalidRequest, 400, `not a number (1.5)`},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":5}`, routeLegacyFace, L, rpc.CodeInvalidRequest, 200, `"method" must be a non-empty string`},
		{"response passes on", `{"jsonrpc":"2.0","id":"srv-1","result":{"action":"accept"}}`, routeLegacyFace, L, pass, 0, ""},
		{"neither request nor response", `{"jsonrpc":"2.0","id":1}`, routeLegacyFace, L, rpc.CodeInvalidRequest, 200, `needs a "method"`},
		{"params array", call("tools/list", `[]`), routeLegacyFace, L, rpc.CodeInvalidParams, 200, `"params" must be a JSON object, not an array`},
		{"unknown method, legacy face", call("foo/bar", `{}`), routeLegacyFace, L, rpc.CodeMethodNotFound, 200, `Method not found: "foo/bar"`},
		{"unknown method, modern face", call("foo/bar", `{}`), routeModernFace, M, rpc.CodeMethodNotFound, 404, `Method not found: "foo/bar"`},
		{"removed method, modern face", call("tasks/result", `{"taskId":"x"}`), routeModernFace, M, rpc.CodeMethodNotFound, 404, "call tasks/get"},
		{"modern method, legacy session", call("server/discover", `{}`), routeLegacyFace, L, rpc.CodeMethodNotFound, 200, "is a 2026-07-28 method"},
		{"unknown method, passthrough", call("foo/bar", `{}`), routeUpstream, L, pass, 0, ""},
		{"unknown notification, legacy face", `{"jsonrpc":"2.0","method":"foo/bar"}`, routeLegacyFace, L, accept, 0, ""},
		{"known notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, routeLegacyFace, L, pass, 0, ""},
		{"notification with bad params", `{"jsonrpc":"2.0","method":"notifications/initialized","params":5}`, routeLegacyFace, L, accept, 0, ""},
		{"tool name a number", call("tools/call", `{"name":5}`), routeLegacyFace, L, rpc.CodeInvalidParams, 200, "tools/call needs params.name, the tool's name as a string (got a number (5))"},
		{"tool name missing, modern", call("tools/call", `{"_meta":{}}`), routeModernFace, M, rpc.CodeInvalidParams, 400, "got nothing"},
		{"arguments an array", call("tools/call", `{"name":"echo","arguments":[1]}`), routeLegacyFace, L, rpc.CodeInvalidParams, 200, "params.arguments must be a JSON object"},
		{"arguments null", call("tools/call", `{"name":"echo","arguments":null}`), routeModernFace, M, pass, 0, ""},
		{"fractional ttl", call("tools/call", `{"name":"slow","task":{"ttl":1.5}}`), routeLegacyFace, L, rpc.CodeInvalidParams, 200, "params.task.ttl must be a whole, non-negative number of milliseconds (got 1.5)"},
		{"negative ttl", call("tools/call", `{"name":"slow","task":{"ttl":-1}}`), routeLegacyFace, L, rpc.CodeInvalidParams, 200, "(got -1)"},
		{"string ttl", call("tools/call", `{"name":"slow","task":{"ttl":"60000"}}`), routeLegacyFace, L, rpc.CodeInvalidParams, 200, "ttl"},
		{"task not an object", call("tools/call", `{"name":"slow","task":true}`), routeLegacyFace, L, rpc.CodeInvalidParams, 200, "params.task must be a JSON object"},
		{"whole ttl", call("tools/call", `{"name":"slow","task":{"ttl":60000}}`), routeLegacyFace, L, pass, 0, ""},
		{"exponent ttl", call("tools/call", `{"name":"slow","task":{"ttl":6e4}}`), routeLegacyFace, L, pass, 0, ""},
		{"null ttl", call("tools/call", `{"name":"slow","task":{"ttl":null}}`), routeLegacyFace, L, pass, 0, ""},
		{"modern ignores task (M-66)", call("tools/call", `{"name":"slow","task":{"ttl":1.5},"_meta":{}}`), routeModernFace, M, pass, 0, ""},
		{"taskId a number", call("tasks/get", `{"taskId":5}`), routeLegacyFace, L, rpc.CodeInvalidParams, 200, "tasks/get needs params.taskId"},
		{"taskId missing, modern", call("tasks/update", `{"_meta":{}}`), routeModernFace, M, rpc.CodeInvalidParams, 400, "tasks/update needs params.taskId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := checkBody(readClientMsg([]byte(tc.body)), tc.route, tc.era)
			switch tc.code {
			case pass:
				if v.err != nil || v.accept {
					t.Fatalf("want it passed on, got %+v", v)
				}
				return
			case accept:
				if v.err != nil || !v.accept {
					t.Fatalf("want 202 accept, got %+v", v)
				}
				return
			}
			if v.err == nil {
				t.Fatalf("want %d, got it passed on", tc.code)
			}
			if v.err.Code != tc.code || !strings.Contains(v.err.Message, tc.says) {
				t.Errorf("got %d %q; want %d saying %q", v.err.Code, v.err.Message, tc.code, tc.says)
			}
			if st := errorStatus(tc.era, v); st != tc.status {
				t.Errorf("HTTP %d, want %d", st, tc.status)
			}
			for _, bad := range []string{"*mcp", "mcp.", "json.", "RawMessage", "Unmarshal", "struct", "Go value"} {
				if strings.Contains(v.err.Message, bad) {
					t.Errorf("message names Go internals (%q): %s", bad, v.err.Message)
				}
			}
			if len(v.id) == 0 {
				t.Errorf("no id for the error response")
			}
		})
	}
}

// The byte-level duplicate scan agrees with the token decoder's on valid
// JSON: same first duplicate, same dotted path, none where there is none.
func TestScanValidJSONMatchesTokens(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"{\"a\":1,\"a\":2}"}}}`,
		`{"a":1,"b":{"c":[{"d":1,"d":2}],"c":3},"a":4}`,
		`{"params":{"x":[1,{"y":1},{"y":2,"y":3}]}}`,
		`{"a":"b","b":"a",  "c" : { "a" : "a" } , "d":[ "a", "a" ] }`,
		`[{"a":1},{"a":2,"a":3}]`,
		`{"a\"b":1,"a\"b":2}`,
		`{"\u0061":1,"a":2}`,
		`{"":1,"":2}`,
		"{\n\t\"k\"\r\n:\"v\",\"k\":[]}",
		`"just a string"`,
		`{"a":1} x`,
		// Past the scan's stack-held frames (16) and names (48).
		strings.Repeat(`{"k":`, 40) + `{"a":1,"a":2}` + strings.Repeat(`}`, 40),
		`{` + strings.Repeat(`"x":[{"y":1}],`, 70) + `"z":1}`,
		`{"p":{` + strings.Repeat(`"a":1,`, 60) + `"b":{"c":1,"c":2}},"q":[` + strings.Repeat(`{"d":1,"d":2},`, 5) + `1]}`,
		// Objects past smallObject names, checked when they close: the
		// duplicate whose second occurrence comes first wins, in or out.
		`{"o":{` + manyNames(40) + `,"n7":1,"x":{"a":1,"a":2}}}`,
		`{"o":{` + manyNames(40) + `,"x":{"a":1,"a":2},"n7":1}}`,
		`{"o":{` + manyNames(40) + `,"n\u0037":1}}`,
		`{"o":{` + manyNames(40) + `},"p":{` + manyNames(40) + `}}`,
		"{\"\xff\":1,\"\xfe\":2}",
		`[` + strings.Repeat(`[`, maxNesting-1) + strings.Repeat(`]`, maxNesting-1) + `]`,
	} {
		want, wantErr := scanJSONTokens([]byte(body))
		got, gotErr := scanJSON([]byte(body))
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("scanJSON(%s) = %q, %v; token decoder says %q, %v", body, got, gotErr, want, wantErr)
		}
	}
}

func FuzzScanJSON(f *testing.F) {
	f.Add(`{"a":1,"b":{"a":[{"c":1,"c":2}]},"a":2}`)
	f.Add(`[{"a":"\"a\""},{"a":1}]`)
	f.Fuzz(func(t *testing.T, body string) {
		if rawjson.DepthExceeds([]byte(body), maxNesting) >= 0 {
			var ne *nestingError
			if _, err := scanJSON([]byte(body)); !errors.As(err, &ne) {
				t.Fatalf("scanJSON(%q) = %v, want the nesting refusal", body, err)
			}
			return
		}
		want, wantErr := scanJSONTokens([]byte(body))
		got, gotErr := scanJSON([]byte(body))
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("scanJSON(%q) = %q, %v; token decoder says %q, %v", body, got, gotErr, want, wantErr)
		}
	})
}

// manyNames is n distinct members "n0":0, "n1":1, ….
func manyNames(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"n%d":%d`, i, i)
	}
	return b.String()
}

// deep is n times open, a 0, n times close.
func deep(open, close string, n int) string {
	return strings.Repeat(open, n) + "0" + strings.Repeat(close, n)
}
