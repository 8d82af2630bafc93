package router

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// A modern tools/call as bridgeload's passthrough phase sends it.
const benchModernCall = `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"bridgeload","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"bench"}}}`

// Classifying a request — reading it, deciding its era, judging it and
// starting its meter — decodes the body once: its allocations are the
// message view, the exchange and the few strings the meter keeps (id, client
// name and version), not maps or a decoder per reader. A second decode of the
// body anywhere on this path (encoding/json into a map or struct) costs
// several allocations per member and breaks the bound.
func TestReadClientMsgAllocs(t *testing.T) {
	mt := newWireMeter(metrics.New(metrics.Options{}), nil)
	body := []byte(benchModernCall)
	h := http.Header{}
	h.Set(modern.HeaderProtocolVersion, modern.ProtocolVersion)
	classify := func() {
		cm := readClientMsg(body)
		got := clientEraOf(h, cm.era)
		if got != era.Modern {
			t.Fatalf("era %v", got)
		}
		if v := checkBody(cm, routeUpstream, got); v.err != nil || v.accept {
			t.Fatalf("verdict %+v", v)
		}
		ex := mt.request(metrics.EraModern, metrics.EraModern, "", cm, nil)
		if ex == nil || ex.method != "tools/call" || ex.id != "17" || ex.client.Name != "bridgeload" {
			t.Fatalf("exchange %+v", ex)
		}
	}
	// The clientMsg, the exchange, the id key, the client's name and
	// version.
	maxAllocs := 5.0
	if raceBuild {
		maxAllocs++ // json.Valid's pooled scanner, now and then
	}
	if n := testing.AllocsPerRun(200, classify); n > maxAllocs {
		t.Fatalf("classifying one request allocates %.0f times, want ≤ %.0f (is the body decoded more than once?)", n, maxAllocs)
	}
	// An answer is read with one walk too.
	answer := []byte(`{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"bench"}],"isError":false}}`)
	if n := testing.AllocsPerRun(200, func() {
		var msg wireMsg
		if !decodeWire(answer, &msg) || !msg.hasResult {
			t.Fatal("answer not read")
		}
	}); n > maxAllocs-4 {
		t.Fatalf("reading an answer allocates %.0f times, want ≤ %.0f", n, maxAllocs-4)
	}
}

// refWire is the meter's view as a reflective decode reads it: the
// reference the one-walk reader (wireMsg.read) must agree with.
type refWire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params *struct {
		Meta *struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
			ClientInfo      *struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"io.modelcontextprotocol/clientInfo"`
		} `json:"_meta"`
		ClientInfo *struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
		Task           json.RawMessage            `json:"task"`
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	} `json:"params"`
	Result *struct {
		IsError    bool   `json:"isError"`
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
		Status     string `json:"status"`
		Task       *struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
	} `json:"result"`
	Error *struct {
		Code int64 `json:"code"`
	} `json:"error"`
}

// viewOf renders what the meter reads of a message, from either reader.
func viewOf(m *wireMsg) []string {
	out := []string{"id=" + string(m.ID), "method=" + m.Method}
	p := &m.Params
	if m.hasParams {
		out = append(out, "pv="+p.MetaProtocolVersion, "taskId="+p.TaskID, "task="+boolStr(p.hasTask()))
		if p.hasMetaClientInfo {
			out = append(out, "metaClient="+p.MetaClientInfo.Name+"/"+p.MetaClientInfo.Version)
		}
		if p.hasClientInfo {
			out = append(out, "client="+p.ClientInfo.Name+"/"+p.ClientInfo.Version)
		}
		out = append(out, "inputResponses="+strings.Join(keysOf(p.raw.inputResponses, nil), ","))
	}
	if m.hasResult {
		r := &m.Result
		out = append(out, "isError="+boolStr(r.IsError), "resultType="+r.ResultType, "rtask="+r.TaskID, "nested="+r.TaskTaskID,
			"inputRequests="+strings.Join(keysOf(r.inputRequests, func(v []byte) string { return inputMethod(v, &viewDec{}) }), ","))
	}
	if m.hasError {
		out = append(out, "code="+strconv.FormatInt(m.ErrorCode, 10))
	}
	return out
}

func refViewOf(r *refWire) []string {
	m := wireMsg{ID: r.ID, Method: r.Method}
	if p := r.Params; p != nil {
		m.hasParams = true
		if p.Meta != nil {
			m.Params.MetaProtocolVersion = p.Meta.ProtocolVersion
			if ci := p.Meta.ClientInfo; ci != nil {
				m.Params.hasMetaClientInfo, m.Params.MetaClientInfo = true, implView{Name: ci.Name, Version: ci.Version}
			}
		}
		if ci := p.ClientInfo; ci != nil {
			m.Params.hasClientInfo, m.Params.ClientInfo = true, implView{Name: ci.Name, Version: ci.Version}
		}
		m.Params.raw.task = bytes.TrimSpace(p.Task)
		m.Params.TaskID = p.TaskID
		if p.InputResponses != nil {
			ir, _ := json.Marshal(p.InputResponses)
			m.Params.raw.inputResponses = ir
		}
	}
	if res := r.Result; res != nil {
		m.hasResult = true
		m.Result = resultView{IsError: res.IsError, ResultType: res.ResultType, TaskID: res.TaskID}
		if res.Task != nil {
			m.Result.TaskTaskID = res.Task.TaskID
		}
		if res.InputRequests != nil {
			ir, _ := json.Marshal(res.InputRequests)
			m.Result.inputRequests = ir
		}
	}
	if r.Error != nil {
		m.hasError, m.ErrorCode = true, r.Error.Code
	}
	return viewOf(&m)
}

func keysOf(obj []byte, val func([]byte) string) []string {
	var keys []string
	if len(obj) == 0 || obj[0] != '{' {
		return nil
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(obj, &m)
	for k, v := range m {
		if val != nil {
			k += ":" + val(bytes.TrimSpace(v))
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// comparable reports whether the reflective decode is a fair reference for
// b: JSON-RPC member names are case-sensitive, and the router reads them so,
// while encoding/json also matches case variants (and merges duplicates,
// which checkBody refuses).
func comparable(b []byte) bool {
	if dup, err := scanJSON(b); err != nil || dup != "" {
		return false
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return true // invalid JSON: both readers refuse it
	}
	return !hasFoldedName(v)
}

// hasFoldedName reports whether any member name in v is a case variant of
// a name the readers look for.
func hasFoldedName(v any) bool {
	names := []string{"id", "method", "params", "result", "error", "code", "_meta", modern.MetaKeyProtocolVersion,
		modern.MetaKeyClientInfo, "clientInfo", "name", "version", "task", "taskId", "inputResponses", "isError",
		"resultType", "status", "inputRequests"}
	switch v := v.(type) {
	case map[string]any:
		for k, mv := range v {
			if strings.ContainsAny(k, "\u212aſ") {
				return true
			}
			for _, name := range names {
				if k != name && strings.EqualFold(k, name) {
					return true
				}
			}
			if hasFoldedName(mv) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasFoldedName(e) {
				return true
			}
		}
	}
	return false
}

// The one-walk reader agrees with a reflective decode into typed fields:
// same success, same values (the meter's labels come from these).
func TestDecodeWireMatchesReflection(t *testing.T) {
	for _, b := range wireCorpus {
		checkWireAgainstReflection(t, []byte(b))
	}
}

func FuzzDecodeWire(f *testing.F) {
	for _, b := range wireCorpus {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b string) { checkWireAgainstReflection(t, []byte(b)) })
}

func checkWireAgainstReflection(t *testing.T, b []byte) {
	t.Helper()
	if !comparable(b) {
		return
	}
	var ref refWire
	refErr := json.Unmarshal(b, &ref)
	t0 := bytes.TrimSpace(b)
	isObj := len(t0) > 0 && t0[0] == '{'
	msg := new(wireMsg)
	ok := decodeWire(b, msg)
	if ok != (refErr == nil && isObj) {
		t.Fatalf("decodeWire(%s) ok=%v; encoding/json: %v", b, ok, refErr)
	}
	if !ok {
		return
	}
	if got, want := viewOf(msg), refViewOf(&ref); !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeWire(%s):\n got %q\nwant %q", b, got, want)
	}
}

var wireCorpus = []string{
	benchModernCall,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c\u00e9","version":"1"}}}`,
	`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}`,
	`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"slow","task":null}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","inputResponses":{"k1":{},"k2":null},"requestState":"s"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"k1":{"method":"elicitation/create","params":{}},"k2":null}}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"T","status":"working"}}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"resultType":"task","taskId":"T","status":"working"}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"x","data":{"code":"y"}}}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":1.5,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":"x"}}`,
	`{"jsonrpc":"2.0","id":2,"error":"x"}`,
	`{"jsonrpc":"2.0","id":2,"error":null,"result":null}`,
	`{"jsonrpc":"2.0","id":2,"result":{"isError":"yes"}}`,
	`{"jsonrpc":"2.0","id":2,"result":[]}`,
	`{"jsonrpc":"2.0","id":null,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"method":null,"params":[]}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":5}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":[]}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"clientInfo":{"name":7}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x\u002fy","params":{"taskId":"t\"1"}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"bad\xff\"}",
	`{"jsonrpc":"2.0","id":1,"method":"x"} trailing`,
	`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
	`  {"id" : 1 , "method" : "ping" }  `,
	`{"METHOD":"x"}`,
}

// Era detection on the router's one read agrees with
// face/modern.DetectClientEra on the body (era.BodySignals, the rule's own decode).
func TestClientMsgEraMatchesDetectClientEra(t *testing.T) {
	for _, b := range append(wireCorpus, "", "  ", "null", `{`, `{"method":"server/discover"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"method":"tools/list","params":{"_meta":null}}`) {
		for _, v := range []string{"", "2025-11-25", modern.ProtocolVersion} {
			checkEra(t, v, "", []byte(b))
			checkEra(t, v, "s1", []byte(b))
		}
	}
}

func FuzzClientMsgEra(f *testing.F) {
	for _, b := range wireCorpus {
		f.Add(modern.ProtocolVersion, b)
	}
	f.Fuzz(func(t *testing.T, version, body string) { checkEra(t, version, "", []byte(body)) })
}

func checkEra(t *testing.T, version, session string, body []byte) {
	t.Helper()
	if !comparable(body) {
		return
	}
	h := http.Header{}
	if version != "" {
		h.Set(modern.HeaderProtocolVersion, version)
	}
	if session != "" {
		h.Set(hdrSessionID, session)
	}
	if got, want := clientEraOf(h, readClientMsg(body).era), modernface.DetectClientEra(h, body); got != want {
		t.Fatalf("era of %q (version %q, session %q) = %v, DetectClientEra says %v", body, version, session, got, want)
	}
}

// BenchmarkClassify: reading, era, checks and meter start of one request.
//
//	go test -run '^$' -bench Classify -benchmem ./router/
func BenchmarkClassify(b *testing.B) {
	mt := newWireMeter(metrics.New(metrics.Options{}), nil)
	body := []byte(benchModernCall)
	h := http.Header{}
	h.Set(modern.HeaderProtocolVersion, modern.ProtocolVersion)
	b.ReportAllocs()
	for range b.N {
		cm := readClientMsg(body)
		got := clientEraOf(h, cm.era)
		_ = checkBody(cm, routeUpstream, got)
		_ = mt.request(metrics.EraModern, metrics.EraModern, "", cm, nil)
	}
}

// cannedSSE answers every upstream POST with one SSE event, in memory.
type cannedSSE struct{}

func (cannedSSE) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	body := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":17,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"bench\"}]}}\n\n"
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: -1, Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// A passthrough call costs a bounded number of allocations more than the
// same call through a bare httputil.ReverseProxy (figure 4c's floor): the
// request read once, its exchange and upstream call, and nothing per
// decode. Parsing the answer a second time, or decoding the request with
// encoding/json anywhere on the path, adds more than the margin.
func TestPassthroughAllocsAgainstReverseProxy(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector drops pooled buffers at random")
	}
	const upURL = "http://127.0.0.1:1/mcp"
	s, err := New(Config{Upstream: upURL, UpstreamEra: "modern", Store: sessionmap.NewMemory(), Metrics: metrics.New(metrics.Options{}),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Transport: cannedSSE{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, _ := url.Parse(upURL)
	floor := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.URL.Path = u.Path; r.Out.Host = "" },
		Transport:     cannedSSE{},
		FlushInterval: -1,
		BufferPool:    &copyBuffers, // the floor's 32 KiB per call is not what is compared
	}
	allocs := func(h http.Handler) float64 {
		return testing.AllocsPerRun(200, func() {
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(benchModernCall))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(modern.HeaderProtocolVersion, modern.ProtocolVersion)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"bench"`) {
				t.Fatalf("HTTP %d: %s", w.Code, w.Body)
			}
		})
	}
	bridge, bare := allocs(s.Handler()), allocs(floor)
	// Today 19 more: body, clientMsg, exchange, id, client name, sniff
	// writer, closures, context, upstream call and its body wrapper.
	const margin = 24
	if bridge > bare+margin {
		t.Fatalf("a passthrough call allocates %.0f times, the bare reverse proxy %.0f: more than %d extra (a second decode?)", bridge, bare, margin)
	}
}

// On passthrough the upstream meter does not parse the answer itself: the
// client exchange, which reads the same bytes, settles it (one parse per
// answer); other upstream requests keep their own parser.
func TestPassthroughAnswerParsedOnce(t *testing.T) {
	mt := newWireMeter(metrics.New(metrics.Options{}), nil)
	tr := &meterTransport{next: cannedSSE{}, u: &upstreamMeter{m: metrics.New(metrics.Options{})}}
	ex := mt.request(metrics.EraModern, metrics.EraModern, "", readClientMsg([]byte(benchModernCall)), nil)
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		settled bool // by the exchange
	}{
		{"passthrough", &passCtx{Context: context.Background(), pass: passCall{pc: peekedCall{method: ex.method, id: ex.id, call: true}, ex: ex}}, true},
		{"face's upstream client", context.Background(), false},
	} {
		req, _ := http.NewRequestWithContext(tc.ctx, http.MethodPost, "http://127.0.0.1:1/mcp", strings.NewReader(benchModernCall))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		mb, ok := resp.Body.(*meterBody)
		if !ok {
			t.Fatalf("%s: body %T is not metered", tc.name, resp.Body)
		}
		if got := mb.c.deferred && mb.c.p == nil && ex.up.Load() == mb.c; got != tc.settled {
			t.Errorf("%s: settled by the exchange = %v, want %v", tc.name, got, tc.settled)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// clientEraOf is the client-era rule on a body the router read, without a
// session lookup (Server.clientEra adds that).
func clientEraOf(h http.Header, sig era.Signals) era.Era {
	return era.Client(era.Request{Version: h.Get(hdrProtocolVersion), SessionID: h.Get(hdrSessionID), Body: sig})
}
