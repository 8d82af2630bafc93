package legacyface_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
)

// paramUpstream is a plain go-sdk 2026-07-28 server with a tool whose
// "region" argument is annotated x-mcp-header: Region (go-sdk's server
// rejects a call whose Mcp-Param-Region does not match the body). go-sdk
// refuses to register a tool with an invalid annotation, so the wrapper
// adds one ("bad_header") to every tools/list answer, as a faulty upstream
// would.
func startParamUpstream(t *testing.T) (*recorder, string) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "param-upstream", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{"2026-07-28"},
	})
	srv.AddTool(&mcp.Tool{
		Name: "regional",
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"n":{"type":"integer"}}}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + string(req.Params.Arguments)}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	rec := &recorder{next: injectInvalidTool(t, h)}
	hs := httptest.NewServer(rec)
	t.Cleanup(hs.Close)
	t.Cleanup(func() { checkUpstreamRequests(t, rec.all()) })
	return rec, hs.URL
}

// injectInvalidTool appends a tool whose x-mcp-header is not a valid header
// name to every tools/list result.
func injectInvalidTool(t *testing.T, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") != "tools/list" {
			next.ServeHTTP(w, r)
			return
		}
		rr := httptest.NewRecorder()
		next.ServeHTTP(rr, r)
		var msg map[string]json.RawMessage
		var res map[string]json.RawMessage
		var tools []json.RawMessage
		if json.Unmarshal(rr.Body.Bytes(), &msg) != nil || json.Unmarshal(msg["result"], &res) != nil || json.Unmarshal(res["tools"], &tools) != nil {
			t.Errorf("upstream tools/list answer is not a JSON result: %s", rr.Body.Bytes())
			return
		}
		tools = append(tools, json.RawMessage(`{"name":"bad_header","inputSchema":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Bad Zone"}}}}`))
		res["tools"], _ = json.Marshal(tools)
		msg["result"], _ = json.Marshal(res)
		body, _ := json.Marshal(msg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rr.Code)
		_, _ = w.Write(body)
	})
}

// logText reads a lockedBuffer (stdio_eof_test.go) as text.
func logText(l *lockedBuffer) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// M-11: the legacy client's tools/list hides the tool with an invalid
// x-mcp-header (with a warning); calls of the annotated tool, plain and
// task-augmented, carry Mcp-Param-Region mirrored from the argument
// (base64-wrapped when unsafe), and none when the argument is absent or null.
func TestMcpParamHeadersM11(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	rec, url := startParamUpstream(t)
	logs := &lockedBuffer{}
	br := startBridge(t, nil, legacyface.Config{Upstream: url, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)

	l := c.call(ctx, "tools/list", nil)
	if l.Err != nil || !bytes.Contains(l.Result, []byte(`"regional"`)) {
		t.Fatalf("tools/list: %s", l.Envelope)
	}
	schemacheck.Load(t).Check(t, schemacheck.Legacy, "ListToolsResult", l.Result)
	if bytes.Contains(l.Result, []byte("bad_header")) {
		t.Errorf("tool with an invalid x-mcp-header listed (M-11 MUST exclude): %s", l.Result)
	}
	if up := rec.byMethod("tools/list"); len(up) != 1 || !bytes.Contains(up[0].Body, []byte("tools/list")) {
		t.Fatalf("upstream tools/list requests: %d", len(up))
	}
	if !strings.Contains(logText(logs), "bad_header") {
		t.Errorf("no warning for the excluded tool; log: %q", logText(logs))
	}

	for _, tc := range []struct {
		name   string
		args   map[string]any
		task   bool
		want   string // decoded Mcp-Param-Region; "" = header absent
		base64 bool
	}{
		{"plain", map[string]any{"region": "eu-west-1", "n": 1}, false, "eu-west-1", false},
		{"absent", map[string]any{"n": 2}, false, "", false},
		{"null", map[string]any{"region": nil}, false, "", false},
		{"base64-wrapped", map[string]any{"region": "zürich"}, false, "zürich", true},
		{"task-augmented", map[string]any{"region": "us-east-2"}, true, "us-east-2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.byMethod("tools/call"))
			params := map[string]any{"name": "regional", "arguments": tc.args}
			if tc.task {
				params["task"] = map[string]any{}
			}
			r := c.call(ctx, "tools/call", params)
			if r.Err != nil {
				t.Fatalf("tools/call: %s", r.Envelope)
			}
			if tc.task {
				res := c.call(ctx, "tasks/result", map[string]any{"taskId": taskIDOf(t, r)})
				if res.Err != nil || !bytes.Contains(res.Result, []byte("ran ")) {
					t.Fatalf("tasks/result: %s", res.Envelope)
				}
			} else if !bytes.Contains(r.Result, []byte("ran ")) {
				t.Fatalf("tools/call: %s", r.Envelope)
			}
			calls := rec.byMethod("tools/call")
			if len(calls) != before+1 {
				t.Fatalf("upstream tools/call count %d, want %d", len(calls), before+1)
			}
			got := calls[len(calls)-1].Header.Values("Mcp-Param-Region")
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("Mcp-Param-Region %q sent for an absent/null argument", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("Mcp-Param-Region = %q, want one value for %q", got, tc.want)
			}
			v := got[0]
			if tc.base64 {
				inner, ok := strings.CutPrefix(v, "=?base64?")
				inner, ok2 := strings.CutSuffix(inner, "?=")
				dec, err := base64.StdEncoding.DecodeString(inner)
				if !ok || !ok2 || err != nil {
					t.Fatalf("Mcp-Param-Region %q is not one =?base64?…?= value", v)
				}
				v = string(dec)
			}
			if v != tc.want {
				t.Errorf("Mcp-Param-Region = %q, want %q", got[0], tc.want)
			}
		})
	}
	// Only tools/call carries the mirrored headers.
	for _, q := range rec.all() {
		if q.Header.Get("Mcp-Method") != "tools/call" && q.Header.Get("Mcp-Param-Region") != "" {
			t.Errorf("%s carried Mcp-Param-Region", q.Header.Get("Mcp-Method"))
		}
	}
	if n := len(rec.byMethod("tools/list")); n != 1 {
		t.Errorf("upstream tools/list %d times, want 1 (the client's listing fills the cache)", n)
	}
	c.checkReceived(t)
}

// M-11: a legacy client that calls without listing first still gets the
// header: the face lists the upstream's tools once to learn the annotations.
func TestMcpParamHeadersWithoutListingM11(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	rec, url := startParamUpstream(t)
	br := startBridge(t, nil, legacyface.Config{Upstream: url})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	for i := 0; i < 2; i++ {
		r := c.call(ctx, "tools/call", map[string]any{"name": "regional", "arguments": map[string]any{"region": "eu-west-1"}})
		if r.Err != nil || !bytes.Contains(r.Result, []byte("ran ")) {
			t.Fatalf("tools/call: %s", r.Envelope)
		}
	}
	calls := rec.byMethod("tools/call")
	if len(calls) != 2 {
		t.Fatalf("upstream tools/call %d, want 2", len(calls))
	}
	for _, q := range calls {
		if got := q.Header.Get("Mcp-Param-Region"); got != "eu-west-1" {
			t.Errorf("Mcp-Param-Region = %q, want eu-west-1", got)
		}
	}
	if n := len(rec.byMethod("tools/list")); n != 1 {
		t.Errorf("upstream tools/list %d times, want exactly 1 (cache filled once)", n)
	}
	c.checkReceived(t)
}

// M-11 SHOULD: when the upstream answers -32020 because a tool's annotations
// changed since the face listed it, the face re-lists the tools and retries
// the call once with the new headers.
func TestMcpParamHeadersRelistOnMismatchM11(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	srv := mcp.NewServer(&mcp.Implementation{Name: "param-upstream", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{"2026-07-28"},
	})
	handler := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + string(req.Params.Arguments)}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "regional", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string"}}}`)}, handler)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	rec := &recorder{next: h}
	hs := httptest.NewServer(rec)
	t.Cleanup(hs.Close)
	t.Cleanup(func() { checkUpstreamRequests(t, rec.all()) })
	br := startBridge(t, nil, legacyface.Config{Upstream: hs.URL})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	if l := c.call(ctx, "tools/list", nil); l.Err != nil {
		t.Fatalf("tools/list: %s", l.Envelope)
	}
	// The upstream now mirrors region: the face's cached view is stale.
	srv.AddTool(&mcp.Tool{Name: "regional", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)}, handler)
	r := c.call(ctx, "tools/call", map[string]any{"name": "regional", "arguments": map[string]any{"region": "eu-west-1"}})
	if r.Err != nil || !bytes.Contains(r.Result, []byte("ran ")) {
		t.Fatalf("tools/call: %s", r.Envelope)
	}
	calls := rec.byMethod("tools/call")
	if len(calls) != 2 || calls[0].Header.Get("Mcp-Param-Region") != "" || calls[1].Header.Get("Mcp-Param-Region") != "eu-west-1" {
		t.Fatalf("upstream tools/call: %d requests, want the stale call then a retry with Mcp-Param-Region", len(calls))
	}
	if n := len(rec.byMethod("tools/list")); n != 2 {
		t.Errorf("upstream tools/list %d times, want 2 (client listing, re-list after -32020)", n)
	}
	c.checkReceived(t)
}
