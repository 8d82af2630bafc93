package modernup

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/modern"
)

var t0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

// recorded is one HTTP request the Client sent.
type recorded struct {
	Header http.Header
	Body   []byte
}

// recorder keeps every POST the Client sends before handing it on.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	reqs []recorded
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{Header: req.Header.Clone(), Body: body})
	r.mu.Unlock()
	r.next.ServeHTTP(w, req)
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// byMethod returns the recorded requests of one method.
func (r *recorder) byMethod(method string) []recorded {
	var out []recorded
	for _, q := range r.all() {
		if m, _ := decodeReq(q.Body); m != nil && m.Method == method {
			out = append(out, q)
		}
	}
	return out
}

func decodeReq(body []byte) (*jsonrpc.Request, error) {
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, err
	}
	req, _ := msg.(*jsonrpc.Request)
	return req, nil
}

type demoEnv struct {
	srv    *demo.Server
	clock  *demo.FakeClock
	url    string
	rec    *recorder
	client *Client
}

// startDemo runs the embedded modern upstream on 127.0.0.1 behind a
// recorder; every message the Client emitted is schema-checked at the end.
func startDemo(t *testing.T, opts demo.Options) *demoEnv {
	t.Helper()
	clk := demo.NewFakeClock(t0)
	if opts.Clock == nil {
		opts.Clock = clk
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	s := demo.New(opts)
	rec := &recorder{next: s.Handler()}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rec)
	hs := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(func() {
		s.Close() // ends listen streams first
		hs.Close()
	})
	env := &demoEnv{srv: s, clock: clk, url: hs.URL + "/mcp", rec: rec}
	env.client = NewHTTP(env.url, nil)
	t.Cleanup(func() { checkEmitted(t, rec.all()) })
	return env
}

// checkEmitted validates every request the Client sent: the JSON-RPC message
// against its $def, params._meta against RequestMetaObject with the required
// per-request fields (M-01, M-02, M-20), and the routing headers (M-10, M-32).
func checkEmitted(t *testing.T, reqs []recorded) {
	t.Helper()
	v := schemacheck.Load(t)
	defs := map[string]struct {
		s   schemacheck.Schema
		def string
	}{
		modern.MethodDiscover:            {schemacheck.Modern, "DiscoverRequest"},
		modern.MethodToolsCall:           {schemacheck.Modern, "CallToolRequest"},
		modern.MethodSubscriptionsListen: {schemacheck.Modern, "SubscriptionsListenRequest"},
		modern.MethodTasksGet:            {schemacheck.Ext, "GetTaskRequest"},
		modern.MethodTasksUpdate:         {schemacheck.Ext, "UpdateTaskRequest"},
		modern.MethodTasksCancel:         {schemacheck.Ext, "CancelTaskRequest"},
	}
	for _, q := range reqs {
		req, err := decodeReq(q.Body)
		if err != nil || req == nil {
			t.Errorf("client sent a non-request: %s (%v)", q.Body, err)
			continue
		}
		if !req.IsCall() {
			t.Errorf("client POSTed a notification %s on HTTP", req.Method)
		}
		if d, ok := defs[req.Method]; ok {
			v.Check(t, d.s, d.def, q.Body)
		} else {
			v.Check(t, schemacheck.Modern, "JSONRPCRequest", q.Body)
		}
		var p struct {
			Meta   json.RawMessage `json:"_meta"`
			TaskID string          `json:"taskId"`
			Name   string          `json:"name"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			t.Errorf("%s params: %v", req.Method, err)
			continue
		}
		v.Check(t, schemacheck.Modern, "RequestMetaObject", p.Meta)
		meta, err := modern.DecodeRequestMetaObject(p.Meta)
		if err != nil {
			t.Errorf("%s _meta: %v", req.Method, err)
			continue
		}
		if meta.ProtocolVersion != modern.ProtocolVersion || meta.ClientCapabilities == nil ||
			!meta.ClientCapabilities.HasTasksExtension() || meta.ClientInfo == nil {
			t.Errorf("%s _meta lacks a per-request field (M-01/M-02/M-20): %s", req.Method, p.Meta)
		}
		if got := q.Header.Get("MCP-Protocol-Version"); got != modern.ProtocolVersion {
			t.Errorf("%s: MCP-Protocol-Version %q", req.Method, got)
		}
		if got := q.Header.Get("Mcp-Method"); got != req.Method {
			t.Errorf("%s: Mcp-Method %q", req.Method, got)
		}
		wantName := ""
		switch req.Method {
		case modern.MethodTasksGet, modern.MethodTasksUpdate, modern.MethodTasksCancel:
			wantName = p.TaskID
		case modern.MethodToolsCall:
			wantName = p.Name
		}
		if wantName != "" {
			got, err := decodeHeaderValue(q.Header.Get("Mcp-Name"))
			if err != nil || got != wantName {
				t.Errorf("%s: Mcp-Name %q (decoded %q, %v), want %q (M-10/M-32)", req.Method, q.Header.Get("Mcp-Name"), got, err, wantName)
			}
		}
		if q.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: sent Mcp-Session-Id to a modern upstream", req.Method)
		}
		if a := q.Header.Get("Accept"); !strings.Contains(a, "application/json") || !strings.Contains(a, "text/event-stream") {
			t.Errorf("%s: Accept %q (M-09)", req.Method, a)
		}
	}
}

// tool builds tools/call params.
func tool(name string, args map[string]any) json.RawMessage {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	b, _ := json.Marshal(p)
	return b
}

// createTask calls a task tool and returns its task id.
func createTask(t *testing.T, c *Client, name string, args map[string]any, opts CallOptions) string {
	t.Helper()
	out, err := c.CallTool(context.Background(), tool(name, args), opts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out.Type != modern.ResultTask || out.Task == nil {
		t.Fatalf("%s: outcome %s %s, want a task", name, out.Type, out.Raw)
	}
	return out.Task.TaskID
}

func elicitCaps() modern.ClientCapabilities {
	return modern.ClientCapabilities{Elicitation: &modern.Object{"form": json.RawMessage(`{}`)}}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func readAll(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	return b
}
