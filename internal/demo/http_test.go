package demo

import (
	"bytes"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h[http.CanonicalHeaderKey(kv[i])] = []string{kv[i+1]}
	}
	return h
}

func wantRPCError(t *testing.T, name string, r rawResp, status int, code int64) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s: HTTP %d, want %d: %s", name, r.Status, status, r.Body)
		return
	}
	if e := r.rpcErr(t); e.Code != code {
		t.Errorf("%s: code %d (%s), want %d", name, e.Code, e.Message, code)
	}
}

func TestMissingExtension_M50_M51_M61(t *testing.T) {
	v := schemacheck.Load(t)
	s, _, url := startServer(t, Options{})
	for _, tool := range []string{"slow_task", "fail_task", "error_task"} {
		r := callTool(t, url, tool, map[string]any{"ms": 1, "text": "x", "reason": "r"}, rawCall{NoTasks: true})
		wantRPCError(t, tool, r, http.StatusBadRequest, rpc.CodeMissingRequiredClientCapability)
		v.Check(t, schemacheck.Modern, "MissingRequiredClientCapabilityError", r.Raw)
		caps, _, ok := modern.RequiredCapabilitiesOf(r.rpcErr(t))
		if !ok || !caps.HasTasksExtension() {
			t.Errorf("%s: data.requiredCapabilities lacks the tasks extension: %s", tool, r.Raw)
		}
	}
	if len(s.TaskIDs()) != 0 {
		t.Errorf("a task was created for a non-declaring request (M-50)")
	}
	// The legacy tasks capability is not the extension (M-66).
	r := callTool(t, url, "slow_task", map[string]any{"ms": 1, "text": "x"},
		rawCall{NoTasks: true, Caps: map[string]any{"tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}})
	wantRPCError(t, "legacy tasks capability", r, http.StatusBadRequest, rpc.CodeMissingRequiredClientCapability)

	// Input tools also need the capability for the input they will ask for (M-48).
	r = callTool(t, url, "elicit_task", map[string]any{"question": "q"}, rawCall{})
	wantRPCError(t, "elicit_task without elicitation", r, http.StatusBadRequest, rpc.CodeMissingRequiredClientCapability)
	if caps, _, _ := modern.RequiredCapabilitiesOf(r.rpcErr(t)); !caps.SupportsElicitationForm() || caps.HasTasksExtension() {
		t.Errorf("elicit_task: requiredCapabilities %s", r.Raw)
	}
	r = callTool(t, url, "sample_task", map[string]any{"prompt": "p"}, rawCall{})
	wantRPCError(t, "sample_task without sampling", r, http.StatusBadRequest, rpc.CodeMissingRequiredClientCapability)

	id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 1, "text": "x"}, rawCall{})
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		r := taskCall(t, url, m, id, map[string]any{"inputResponses": map[string]any{}}, rawCall{NoTasks: true})
		wantRPCError(t, m, r, http.StatusBadRequest, rpc.CodeMissingRequiredClientCapability)
		v.Check(t, schemacheck.Modern, "MissingRequiredClientCapabilityError", r.Raw)
	}
	r = rawCall{Method: "subscriptions/listen", NoTasks: true,
		Params: map[string]any{"notifications": map[string]any{"taskIds": []string{id}}}}.do(t, url)
	wantRPCError(t, "listen with taskIds", r, http.StatusBadRequest, rpc.CodeMissingRequiredClientCapability)
	if c := s.Counters(); c.CapabilityFails != 10 {
		t.Errorf("CapabilityFails = %d, want 10", c.CapabilityFails)
	}
}

func TestRemovedMethods_M42_M66(t *testing.T) {
	v := schemacheck.Load(t)
	s, _, url := startServer(t, Options{})
	id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 1, "text": "x"}, rawCall{})
	for _, m := range []string{"tasks/result", "tasks/list"} {
		r := rawCall{Method: m, Params: map[string]any{"taskId": id}}.do(t, url)
		wantRPCError(t, m, r, http.StatusNotFound, rpc.CodeMethodNotFound)
		v.Check(t, schemacheck.Modern, "JSONRPCErrorResponse", r.Raw)
	}
	r := rawCall{Method: "no/such"}.do(t, url)
	wantRPCError(t, "unknown method", r, http.StatusNotFound, rpc.CodeMethodNotFound)
	if c := s.Counters(); c.RemovedMethods != 2 {
		t.Errorf("RemovedMethods = %d", c.RemovedMethods)
	}
}

func TestHeaderValidation_M43_M67(t *testing.T) {
	v := schemacheck.Load(t)
	s, _, url := startServer(t, Options{})
	id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 1000, "text": "x"}, rawCall{})
	get := rawCall{Method: "tasks/get", Params: map[string]any{"taskId": id}}
	echo := rawCall{Method: "tools/call", Params: map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}}
	with := func(c rawCall, h http.Header) rawCall { c.Header = h; return c }
	cases := []struct {
		name string
		call rawCall
	}{
		{"missing MCP-Protocol-Version", with(echo, hdr("MCP-Protocol-Version", ""))},
		{"MCP-Protocol-Version mismatch", with(echo, hdr("MCP-Protocol-Version", "2025-11-25"))},
		{"missing Mcp-Method", with(echo, hdr("Mcp-Method", ""))},
		{"Mcp-Method mismatch", with(echo, hdr("Mcp-Method", "tools/list"))},
		{"tools/call missing Mcp-Name", with(echo, hdr("Mcp-Name", ""))},
		{"tools/call Mcp-Name mismatch", with(echo, hdr("Mcp-Name", "slow_task"))},
		{"tasks/get missing Mcp-Name", with(get, hdr("Mcp-Name", ""))},
		{"tasks/get Mcp-Name mismatch", with(get, hdr("Mcp-Name", "ffffffffffffffffffffffffffffffff"))},
		{"tasks/get bad base64", with(get, hdr("Mcp-Name", "=?base64?%%%?="))},
		{"tasks/cancel Mcp-Name mismatch", with(rawCall{Method: "tasks/cancel", Params: map[string]any{"taskId": id}}, hdr("Mcp-Name", "other"))},
		{"tasks/update missing Mcp-Name", with(rawCall{Method: "tasks/update", Params: map[string]any{"taskId": id, "inputResponses": map[string]any{}}}, hdr("Mcp-Name", ""))},
	}
	for _, c := range cases {
		r := c.call.do(t, url)
		if c.name == "MCP-Protocol-Version mismatch" {
			// A supported-by-nobody legacy header is answered with -32022.
			wantRPCError(t, c.name, r, http.StatusBadRequest, rpc.CodeUnsupportedProtocolVersion)
			continue
		}
		wantRPCError(t, c.name, r, http.StatusBadRequest, rpc.CodeHeaderMismatch)
		v.Check(t, schemacheck.Modern, "HeaderMismatchError", r.Raw)
	}
	if s.GetCount(id) != 0 || s.Status(id) != modern.StatusWorking {
		t.Errorf("a rejected request reached the handler")
	}

	// The =?base64?…?= encoding is decoded before comparing (M-10).
	enc := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(id)) + "?="
	if r := with(get, hdr("Mcp-Name", enc)).do(t, url); r.Status != http.StatusOK {
		t.Errorf("base64 Mcp-Name for tasks/get: HTTP %d %s", r.Status, r.Body)
	}
	if r := with(echo, hdr("Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("echo"))+"?=")).do(t, url); r.Status != http.StatusOK {
		t.Errorf("base64 Mcp-Name for tools/call: HTTP %d %s", r.Status, r.Body)
	}
	// A version header with a body lacking _meta: -32602 (M-37).
	r := rawCall{Method: "tools/list", NoMeta: true}.do(t, url)
	wantRPCError(t, "missing _meta", r, http.StatusBadRequest, rpc.CodeInvalidParams)
	// An unknown future version: -32022 with data (M-38).
	r = rawCall{Method: "tools/list", Params: map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}},
		Header: hdr("MCP-Protocol-Version", "2099-01-01")}.do(t, url)
	wantRPCError(t, "future version", r, http.StatusBadRequest, rpc.CodeUnsupportedProtocolVersion)
	v.Check(t, schemacheck.Modern, "UnsupportedProtocolVersionError", r.Raw)
	if c := s.Counters(); c.HeaderRejected != 10 {
		t.Errorf("HeaderRejected = %d, want 10", c.HeaderRejected)
	}
}

func TestModernOnlyRejectsLegacy_M44(t *testing.T) {
	v := schemacheck.Load(t)
	_, _, url := startServer(t, Options{})
	initialize := rawCall{Method: "initialize", NoMeta: true, Params: map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "old", "version": "1"},
	}, Header: hdr("MCP-Protocol-Version", "", "Mcp-Method", "")}
	r := initialize.do(t, url)
	wantRPCError(t, "initialize", r, http.StatusBadRequest, rpc.CodeUnsupportedProtocolVersion)
	v.Check(t, schemacheck.Modern, "UnsupportedProtocolVersionError", r.Raw)
	data, ok := modern.UnsupportedVersionOf(r.rpcErr(t))
	if !ok || len(data.Supported) != 1 || data.Supported[0] != ProtocolVersion || data.Requested != "2025-11-25" {
		t.Errorf("initialize refusal data = %+v (M-44: name the supported versions)", data)
	}
	if !strings.Contains(r.rpcErr(t).Message, ProtocolVersion) {
		t.Errorf("message does not name %s: %s", ProtocolVersion, r.rpcErr(t).Message)
	}
	// A legacy request after initialize: the legacy header is refused the same way.
	r = rawCall{Method: "tools/list", NoMeta: true, Header: hdr("MCP-Protocol-Version", "2025-11-25", "Mcp-Method", "")}.do(t, url)
	wantRPCError(t, "legacy tools/list", r, http.StatusBadRequest, rpc.CodeUnsupportedProtocolVersion)
	// No version anywhere: a header error naming the era.
	r = rawCall{Method: "tools/list", NoMeta: true, Header: hdr("MCP-Protocol-Version", "", "Mcp-Method", "")}.do(t, url)
	wantRPCError(t, "era-less tools/list", r, http.StatusBadRequest, rpc.CodeHeaderMismatch)
}

func TestDualEraAcceptsInitialize(t *testing.T) {
	_, _, url := startServer(t, Options{DualEra: true})
	r := rawCall{Method: "initialize", NoMeta: true, Params: map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "old", "version": "1"},
	}, Header: hdr("MCP-Protocol-Version", "", "Mcp-Method", "")}.do(t, url)
	res := decode[struct {
		ProtocolVersion string `json:"protocolVersion"`
	}](t, r.result(t))
	if res.ProtocolVersion != "2025-11-25" {
		t.Errorf("dual-era initialize negotiated %q", res.ProtocolVersion)
	}
	d := decode[struct {
		SupportedVersions []string `json:"supportedVersions"`
	}](t, rawCall{Method: "server/discover"}.do(t, url).result(t))
	if len(d.SupportedVersions) < 2 || d.SupportedVersions[0] != ProtocolVersion {
		t.Errorf("dual-era supportedVersions = %v", d.SupportedVersions)
	}
	// The extension never enables tasks for a legacy request (M-66).
	r = rawCall{Method: "tools/call", NoMeta: true, Params: map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 1, "text": "x"}},
		Header: hdr("MCP-Protocol-Version", "2025-11-25", "Mcp-Method", "", "Mcp-Name", "")}.do(t, url)
	if e := r.rpcErr(t); e.Code != rpc.CodeMissingRequiredClientCapability {
		t.Errorf("legacy task tool call: %v", e)
	}
}

func TestOriginAndHostProtection_M43(t *testing.T) {
	_, _, url := startServer(t, Options{AllowedOrigins: []string{"https://app.example"}})
	for origin, want := range map[string]int{
		"http://evil.example":    http.StatusForbidden,
		"null":                   http.StatusForbidden,
		"http://localhost:6274":  http.StatusOK,
		"http://127.0.0.1:3000":  http.StatusOK,
		"https://app.example":    http.StatusOK,
		"https://app.example:99": http.StatusForbidden,
	} {
		r := rawCall{Method: "server/discover", Header: hdr("Origin", origin)}.do(t, url)
		if r.Status != want {
			t.Errorf("Origin %s: HTTP %d, want %d", origin, r.Status, want)
		}
	}
	// DNS rebinding: a loopback listener refuses a foreign Host.
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(`{}`)))
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: HTTP %d, want 403", resp.StatusCode)
	}
}

func TestGetAndDeleteAre405(t *testing.T) {
	_, _, url := startServer(t, Options{})
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(m, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: HTTP %d, want 405", m, resp.StatusCode)
		}
		if resp.Header.Get("X-Accel-Buffering") != "no" {
			t.Errorf("%s: no X-Accel-Buffering", m)
		}
	}
}

func TestOversizedBodyIs413(t *testing.T) {
	_, _, url := startServer(t, Options{})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
		strings.Repeat("a", maxBody) + `"}}}`
	resp, err := http.Post(url, "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("HTTP %d, want 413", resp.StatusCode)
	}
}

func TestTasksAreBoundToThePrincipal(t *testing.T) {
	s, _, url := startServer(t, Options{})
	alice := rawCall{Auth: "Bearer alice-token"}
	id, _ := createTask(t, url, "slow_task", map[string]any{"ms": 1000, "text": "x"}, alice)
	if r := taskCall(t, url, "tasks/get", id, nil, alice); r.Status != http.StatusOK {
		t.Fatalf("owner get: HTTP %d %s", r.Status, r.Body)
	}
	unknown := taskCall(t, url, "tasks/get", "0123456789abcdef0123456789abcdef", nil, alice).rpcErr(t)
	for name, c := range map[string]rawCall{"other principal": {Auth: "Bearer bob-token"}, "anonymous": {}} {
		for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
			r := taskCall(t, url, m, id, map[string]any{"inputResponses": map[string]any{}}, c)
			e := r.rpcErr(t)
			if e.Code != rpc.CodeInvalidParams || r.Status != http.StatusBadRequest {
				t.Errorf("%s %s: HTTP %d %v", name, m, r.Status, e)
			}
			// A foreign id reads exactly like an unknown one (M-60, M-65), apart from the id itself.
			if strings.ReplaceAll(e.Message, id, "X") != strings.ReplaceAll(unknown.Message, "0123456789abcdef0123456789abcdef", "X") {
				t.Errorf("%s %s: message %q differs from the unknown-id message %q", name, m, e.Message, unknown.Message)
			}
		}
	}
	if s.Status(id) != modern.StatusWorking {
		t.Errorf("a foreign cancel reached the task: %s", s.Status(id))
	}
}

func TestBatchAndGarbageAreRefused(t *testing.T) {
	_, _, url := startServer(t, Options{})
	for name, body := range map[string]string{
		"not json": `{{{`,
		"batch":    `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}]`,
	} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", ProtocolVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("%s: HTTP %d, want 4xx", name, resp.StatusCode)
		}
	}
}

func TestJSONResponseOption(t *testing.T) {
	_, _, url := startServer(t, Options{JSONResponse: true})
	r := callTool(t, url, "echo", map[string]any{"text": "j"}, rawCall{})
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if text, _ := textOf(t, r.result(t)); text != "j" {
		t.Errorf("echo = %q", text)
	}
}

func TestStartDefaultsToLoopback(t *testing.T) {
	s := New(Options{})
	u, stop, err := s.Start(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	host := strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/mcp")
	h, _, err := net.SplitHostPort(host)
	if err != nil || h != "127.0.0.1" {
		t.Errorf("default listen %q is not 127.0.0.1", u)
	}
	if err := stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if err := stop(); err != nil {
		t.Errorf("second stop: %v", err)
	}
}
