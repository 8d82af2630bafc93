package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// rawAnswer is the router's answer to one raw POST.
type rawAnswer struct {
	status int
	ctype  string
	body   []byte
	err    *rpc.Error
}

// postRaw sends body as-is with the client's headers (session or the modern
// routing headers for method).
func postRaw(t *testing.T, ctx context.Context, c *rawClient, method string, body []byte) rawAnswer {
	t.Helper()
	params := json.RawMessage(`{}`)
	if c.modern {
		params = json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	}
	resp, err := c.post(ctx, body, method, params)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := rawAnswer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: b}
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		var m struct {
			Error *rpc.Error `json:"error"`
		}
		_ = json.Unmarshal(b, &m)
		a.err = m.Error
	}
	return a
}

func (a rawAnswer) want(t *testing.T, what string, status int, code int64, says string) {
	t.Helper()
	if a.status != status || a.err == nil || a.err.Code != code || !strings.Contains(a.err.Message, says) {
		t.Errorf("%s: HTTP %d %s %s; want HTTP %d, JSON-RPC %d saying %q", what, a.status, a.ctype, a.body, status, code, says)
		return
	}
	if !strings.HasPrefix(a.ctype, "application/json") {
		t.Errorf("%s: Content-Type %q, want application/json", what, a.ctype)
	}
	for _, bad := range []string{"*mcp", "CallToolParams", "JSON RPC not handled", "empty batch"} {
		if strings.Contains(a.err.Message, bad) && !strings.Contains(says, bad) {
			t.Errorf("%s: message %q shows %q", what, a.err.Message, bad)
		}
	}
}

// JSON-RPC errors at the router, for a legacy client (legacy face in front
// of a modern upstream) and a modern client (modern face in front of a
// legacy upstream): malformed bodies get -32700/-32600/-32602 with words a
// person can act on, unknown methods -32601 (not go-sdk's plain-text 400),
// unknown notifications 202.
func TestJSONRPCErrorsAtTheRouter(t *testing.T) {
	ctx := ctxT(t)
	t.Run("legacy client", func(t *testing.T) {
		br := startBridge(t, router.Config{Upstream: startModern(t)})
		c := newLegacyClient(t, br.url, "legacy-app")
		mustOK(t, "initialize", c.initialize(ctx))
		req := func(method, params string) []byte {
			return []byte(`{"jsonrpc":"2.0","id":9,"method":"` + method + `","params":` + params + `}`)
		}
		postRaw(t, ctx, c, "foo/bar", req("foo/bar", `{}`)).want(t, "unknown method", http.StatusOK, rpc.CodeMethodNotFound, `Method not found: "foo/bar"`)
		if a := postRaw(t, ctx, c, "", []byte(`{"jsonrpc":"2.0","method":"notifications/foo"}`)); a.status != http.StatusAccepted || len(bytes.TrimSpace(a.body)) != 0 {
			t.Errorf("unknown notification: HTTP %d %s %s, want 202 and no body", a.status, a.ctype, a.body)
		}
		postRaw(t, ctx, c, "", []byte("null")).want(t, "null body", http.StatusBadRequest, rpc.CodeInvalidRequest, "the body is JSON null")
		postRaw(t, ctx, c, "tools/list", append(req("tools/list", `{}`), "{}"...)).want(t, "trailing data", http.StatusBadRequest, rpc.CodeParseError, "unexpected data after the JSON-RPC message")
		postRaw(t, ctx, c, "tools/call", req("tools/call", `{"name":"echo","name":"slow_task"}`)).want(t, "duplicate member", http.StatusOK, rpc.CodeInvalidParams, `"params.name" appears twice`)
		postRaw(t, ctx, c, "tools/call", req("tools/call", `{"name":5}`)).want(t, "name: 5", http.StatusOK, rpc.CodeInvalidParams, "params.name, the tool's name as a string")
		postRaw(t, ctx, c, "tools/call", req("tools/call", `{"name":"slow_task","arguments":{"ms":10},"task":{"ttl":1.5}}`)).want(t, "ttl: 1.5", http.StatusOK, rpc.CodeInvalidParams, "whole, non-negative number of milliseconds (got 1.5)")
		postRaw(t, ctx, c, "tools/list", []byte("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\",\"params\":{\"cursor\":\"\xc3\x28\"}}")).want(t, "invalid UTF-8", http.StatusBadRequest, rpc.CodeParseError, "not valid UTF-8")

		// Every method the router lets through to the legacy face is one
		// the face answers: none gets -32601 or go-sdk's plain-text 400.
		methods := []string{"initialize", "ping", "logging/setLevel", "tools/list", "tasks/list", "prompts/list", "resources/list",
			"resources/templates/list", "completion/complete", "resources/subscribe", "resources/unsubscribe", "prompts/get", "resources/read"}
		sort.Strings(methods)
		for _, m := range methods {
			params := `{}`
			if m == "initialize" {
				params = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`
			}
			a := postRaw(t, ctx, c, m, req(m, params))
			if strings.HasPrefix(a.ctype, "text/plain") || (a.err != nil && a.err.Code == rpc.CodeMethodNotFound) {
				t.Errorf("%s: HTTP %d %s %s; the legacy face should have answered it", m, a.status, a.ctype, a.body)
			}
		}
	})
	t.Run("modern client", func(t *testing.T) {
		up, _ := startLegacy(t)
		br := startBridge(t, router.Config{Upstream: up})
		c := newModernClient(t, br.url, "modern-app")
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		req := func(method, params string) []byte {
			return []byte(`{"jsonrpc":"2.0","id":3,"method":"` + method + `","params":{` + params + meta + `}}`)
		}
		postRaw(t, ctx, c, "foo/bar", req("foo/bar", ``)).want(t, "unknown method", http.StatusNotFound, rpc.CodeMethodNotFound, `Method not found: "foo/bar"`)
		postRaw(t, ctx, c, "tools/call", req("tools/call", `"name":5,`)).want(t, "name: 5", http.StatusBadRequest, rpc.CodeInvalidParams, "params.name, the tool's name as a string")
		postRaw(t, ctx, c, "tools/list", []byte("null")).want(t, "null body", http.StatusBadRequest, rpc.CodeInvalidRequest, "the body is JSON null")
		postRaw(t, ctx, c, "tools/list", append(req("tools/list", ``), " x"...)).want(t, "trailing data", http.StatusBadRequest, rpc.CodeParseError, "unexpected data")
		postRaw(t, ctx, c, "tools/list", []byte(`{"jsonrpc":"2.0","id":3,"id":4,"method":"tools/list","params":{`+meta+`}}`)).want(t, "duplicate id", http.StatusBadRequest, rpc.CodeInvalidRequest, `"id" appears twice`)
		// A well-formed request still reaches the face.
		if r := c.call(ctx, modern.MethodToolsList, nil); r.Err != nil {
			t.Errorf("tools/list: %v", r)
		}
	})
}

// Client mistakes get a JSON-RPC error that says what to do, not an internal
// error, a plain-text 400 or advice meant for the other era: a second
// initialize on a session (-32600, no ERROR line), a request without any era
// (the modern client is told about _meta, M-01, not only about initialize),
// a batch (removed in 2025-06-18) and a body nested too deep (-32600 naming
// the limit, HTTP 400, not "not JSON").
func TestClientMistakesInPlainWords(t *testing.T) {
	ctx := ctxT(t)
	var logs syncbuf.Buffer
	br := startBridge(t, router.Config{Upstream: startModern(t), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c := newLegacyClient(t, br.url, "legacy-app")
	mustOK(t, "initialize", c.initialize(ctx))

	init := []byte(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	postRaw(t, ctx, c, "initialize", init).want(t, "second initialize", http.StatusOK, rpc.CodeInvalidRequest,
		"this session is already initialized; start a new session without Mcp-Session-Id to initialize again")
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a client's second initialize logged an ERROR line:\n%s", logs.String())
	}
	// The refusal line says why, not a generic "e.g.".
	if l := logs.String(); !strings.Contains(l, "invalid request (-32600): Invalid Request: this session is already initialized") || strings.Contains(l, "e.g.") {
		t.Errorf("the refusal line does not say the concrete reason:\n%s", l)
	}

	// A modern client that forgot both its _meta version and the header
	// carries no era: the router hands it to the legacy face.
	m := newModernClient(t, br.url, "modern-app")
	m.headers = map[string]string{modern.HeaderProtocolVersion: ""}
	a := postRaw(t, ctx, m, "tools/list", []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`))
	a.want(t, "no era", http.StatusBadRequest, rpc.CodeInvalidRequest, `params._meta["io.modelcontextprotocol/protocolVersion"]: a 2026-07-28 client sends "2026-07-28" there on every request`)
	if a.err != nil && strings.Contains(a.err.Message, "send initialize first") {
		t.Errorf("no era: %q tells a modern client to send initialize first", a.err.Message)
	}

	batch := []byte(`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`)
	postRaw(t, ctx, c, "", batch).want(t, "legacy batch", http.StatusBadRequest, rpc.CodeInvalidRequest,
		"batches are not supported by 2025-11-25 or 2026-07-28 (MCP removed JSON-RPC batching in 2025-06-18)")

	deep := []byte(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"a":` +
		strings.Repeat("[", 150_000) + strings.Repeat("]", 150_000) + `}}}`)
	postRaw(t, ctx, c, "tools/call", deep).want(t, "deep valid JSON", http.StatusBadRequest, rpc.CodeInvalidRequest,
		"request nesting is deeper than 128 levels")
}
