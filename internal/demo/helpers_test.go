package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/modern"
)

var t0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

// startServer starts a demo server on 127.0.0.1:0 with a fake clock and a
// short poll interval; it is stopped when the test ends.
func startServer(t *testing.T, opts Options) (*Server, *FakeClock, string) {
	t.Helper()
	clk := NewFakeClock(t0)
	if opts.Clock == nil {
		opts.Clock = clk
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 5 * time.Millisecond
	}
	s := New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	url, stop, err := s.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A connection the client dialed but never used counts as new, not
		// idle, and http.Server.Shutdown waits up to 5 s for it: close the
		// test clients' spare connections first.
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		cancel()
	})
	return s, clk, url
}

// modernMeta is the per-request _meta triple; extra capabilities are merged
// into clientCapabilities.
func modernMeta(withTasks bool, caps map[string]any) map[string]any {
	cc := map[string]any{}
	for k, v := range caps {
		cc[k] = v
	}
	if withTasks {
		cc["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	return map[string]any{
		mcp.MetaKeyProtocolVersion:    ProtocolVersion,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "demo-test", "version": "1"},
		mcp.MetaKeyClientCapabilities: cc,
	}
}

// rawCall is one raw HTTP JSON-RPC exchange.
type rawCall struct {
	Method  string
	Params  map[string]any // _meta is added unless NoMeta or already set
	NoMeta  bool
	NoTasks bool           // omit the tasks extension from _meta
	Caps    map[string]any // extra client capabilities
	Header  http.Header    // overrides; a value of "" deletes the header
	ID      any            // default 1
	Auth    string
}

type rawResp struct {
	Status int
	Header http.Header
	Body   []byte
	Msg    *jsonrpc.Response // the JSON-RPC response, if any
	Raw    []byte            // its raw JSON
	Notes  []*jsonrpc.Request
}

var idSeq atomic.Int64

// request builds the HTTP request of c, with the standard headers.
func (c rawCall) request(t *testing.T, ctx context.Context, url string) *http.Request {
	t.Helper()
	params := map[string]any{}
	for k, v := range c.Params {
		params[k] = v
	}
	if _, ok := params["_meta"]; !ok && !c.NoMeta {
		params["_meta"] = modernMeta(!c.NoTasks, c.Caps)
	}
	id := c.ID
	if id == nil {
		id = idSeq.Add(1)
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": c.Method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(modern.HeaderProtocolVersion, ProtocolVersion)
	req.Header.Set(modern.HeaderMethod, c.Method)
	if f := modern.NameSource(c.Method); f != "" {
		if v, ok := params[f].(string); ok {
			req.Header.Set(modern.HeaderName, modern.EncodeHeaderValue(v))
		}
	}
	if c.Auth != "" {
		req.Header.Set("Authorization", c.Auth)
	}
	for k, vs := range c.Header {
		if len(vs) == 1 && vs[0] == "" {
			req.Header.Del(k)
			continue
		}
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	return req
}

func (c rawCall) do(t *testing.T, url string) rawResp {
	t.Helper()
	req := c.request(t, context.Background(), url)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := rawResp{Status: resp.StatusCode, Header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, data := range readSSE(t, resp.Body) {
			out.Body = append(out.Body, data...)
			out.absorb(t, data)
		}
		return out
	}
	out.Body, _ = io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		out.absorb(t, out.Body)
	}
	return out
}

func (r *rawResp) absorb(t *testing.T, data []byte) {
	t.Helper()
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		t.Fatalf("undecodable message %s: %v", data, err)
	}
	switch m := m.(type) {
	case *jsonrpc.Response:
		r.Msg = m
		r.Raw = append([]byte(nil), data...)
	case *jsonrpc.Request:
		r.Notes = append(r.Notes, m)
	}
}

// readSSE returns the data of every event until EOF.
func readSSE(t *testing.T, r io.Reader) [][]byte {
	t.Helper()
	var out [][]byte
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != nil {
				out = append(out, data)
				data = nil
			}
		case strings.HasPrefix(line, "data: "):
			data = append(data, line[len("data: "):]...)
		}
	}
	return out
}

// result returns the JSON-RPC result of r, failing on an error response.
func (r rawResp) result(t *testing.T) json.RawMessage {
	t.Helper()
	if r.Msg == nil {
		t.Fatalf("no JSON-RPC response (HTTP %d): %s", r.Status, r.Body)
	}
	if r.Msg.Error != nil {
		t.Fatalf("JSON-RPC error (HTTP %d): %v", r.Status, r.Msg.Error)
	}
	return r.Msg.Result
}

// rpcErr returns the JSON-RPC error of r, failing if there is none.
func (r rawResp) rpcErr(t *testing.T) *jsonrpc.Error {
	t.Helper()
	if r.Msg == nil || r.Msg.Error == nil {
		t.Fatalf("want a JSON-RPC error, got HTTP %d: %s", r.Status, r.Body)
	}
	var e *jsonrpc.Error
	b, _ := json.Marshal(r.Msg.Error)
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// callTool calls a tool over raw HTTP and returns the raw response.
func callTool(t *testing.T, url, name string, args map[string]any, c rawCall) rawResp {
	t.Helper()
	c.Method = "tools/call"
	c.Params = map[string]any{"name": name, "arguments": args}
	return c.do(t, url)
}

// createTask calls a task tool and returns the CreateTaskResult.
func createTask(t *testing.T, url, name string, args map[string]any, c rawCall) (string, json.RawMessage) {
	t.Helper()
	r := callTool(t, url, name, args, c)
	res := r.result(t)
	v := decode[struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}](t, res)
	if v.ResultType != "task" || v.TaskID == "" {
		t.Fatalf("want a CreateTaskResult, got %s", res)
	}
	return v.TaskID, res
}

// taskCall sends tasks/get|update|cancel over raw HTTP.
func taskCall(t *testing.T, url, method, id string, extra map[string]any, c rawCall) rawResp {
	t.Helper()
	c.Method = method
	c.Params = map[string]any{"taskId": id}
	for k, v := range extra {
		c.Params[k] = v
	}
	return c.do(t, url)
}

type detailed struct {
	ResultType     string                     `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         modern.TaskStatus          `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	TTLMs          *int64                     `json:"ttlMs"`
	PollIntervalMs *int64                     `json:"pollIntervalMs"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage            `json:"result"`
	Error          *jsonrpc.Error             `json:"error"`
	Meta           map[string]any             `json:"_meta"`
}

func getTask(t *testing.T, url, id string) (detailed, json.RawMessage) {
	t.Helper()
	res := taskCall(t, url, "tasks/get", id, nil, rawCall{}).result(t)
	return decode[detailed](t, res), res
}
