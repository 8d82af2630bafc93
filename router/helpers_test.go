package router_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startModern runs the embedded modern upstream (internal/demo) on loopback.
func startModern(t testing.TB) string {
	t.Helper()
	srv := demo.New(demo.Options{PollInterval: 20 * time.Millisecond})
	url, stop, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		_ = stop()
	})
	return url
}

// startLegacy runs the in-repo legacy fixture (2025-11-25 + legacy tasks).
func startLegacy(t testing.TB) (string, *legacyfixture.Server) {
	t.Helper()
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	url, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url, fx
}

type bridgeEnv struct {
	srv  *router.Server
	hs   *httptest.Server
	url  string // the /mcp endpoint
	base string
}

// startBridge runs a bridge (memory store, quick watchers) on loopback.
func startBridge(t testing.TB, cfg router.Config) *bridgeEnv {
	t.Helper()
	if cfg.Store == nil && cfg.DataDir == "" {
		cfg.Store = sessionmap.NewMemory()
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New(metrics.Options{})
	}
	legacyTweak := cfg.Legacy
	cfg.Legacy = func(c *legacyface.Config) {
		c.Watch = watch.Config{MinPollInterval: 5 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, IdleTimeout: 5 * time.Second, Jitter: -1}
		if legacyTweak != nil {
			legacyTweak(c)
		}
	}
	modernTweak := cfg.Modern
	cfg.Modern = func(o *modernface.Options) {
		o.PollInterval = 20 * time.Millisecond
		if modernTweak != nil {
			modernTweak(o)
		}
	}
	s, err := router.New(cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	hs := httptest.NewServer(s.Mux(true))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		hs.CloseClientConnections()
		hs.Close()
		if err := s.Close(); err != nil {
			t.Errorf("server close: %v", err)
		}
	})
	return &bridgeEnv{srv: s, hs: hs, url: hs.URL + "/mcp", base: hs.URL}
}

// ---- a raw JSON-RPC client of either era ----------------------------------

// rawClient speaks JSON-RPC over Streamable HTTP by hand, so tests see (and
// send) exactly what crosses the wire: legacy (initialize, Mcp-Session-Id,
// server→client requests answered by POST) or modern (per-request _meta and
// the routing headers on every request).
type rawClient struct {
	t      testing.TB
	url    string
	modern bool
	name   string // clientInfo name
	caps   map[string]any
	authz  string
	// noMeta sends modern requests without the automatic _meta; headers
	// set or (with "") remove HTTP headers on the next requests.
	noMeta  bool
	headers map[string]string

	mu        sync.Mutex
	sid       string
	ids       atomic.Int64
	onRequest func(method string, params json.RawMessage) (any, *rpc.Error)
}

func newLegacyClient(t testing.TB, url, name string) *rawClient {
	return &rawClient{t: t, url: url, name: name, caps: map[string]any{"elicitation": map[string]any{}}}
}

func newModernClient(t testing.TB, url, name string) *rawClient {
	return &rawClient{t: t, url: url, modern: true, name: name,
		caps: map[string]any{"extensions": map[string]any{modern.TasksExtensionID: map[string]any{}}, "elicitation": map[string]any{"form": map[string]any{}}}}
}

// reply is one answer: the result or the error, and the HTTP status.
type reply struct {
	Status   int
	Result   json.RawMessage
	Err      *rpc.Error
	Requests []string // methods of server→client requests seen on the stream
	Header   http.Header
}

func (r reply) String() string {
	if r.Err != nil {
		return fmt.Sprintf("HTTP %d error %d %s", r.Status, r.Err.Code, r.Err.Message)
	}
	return fmt.Sprintf("HTTP %d %s", r.Status, r.Result)
}

// initialize opens a legacy session (initialize + notifications/initialized)
// when the upstream accepts it.
func (c *rawClient) initialize(ctx context.Context) reply {
	c.t.Helper()
	r := c.call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    c.caps,
		"clientInfo":      map[string]any{"name": c.name, "version": "1.0.0"},
	})
	if r.Err != nil || r.Status != http.StatusOK {
		return r
	}
	c.mu.Lock()
	c.sid = r.Header.Get("Mcp-Session-Id")
	c.mu.Unlock()
	c.notify(ctx, "notifications/initialized", nil)
	return r
}

func (c *rawClient) params(method string, params any) (json.RawMessage, error) {
	var p map[string]any
	switch v := params.(type) {
	case nil:
		p = map[string]any{}
	case map[string]any:
		p = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
	}
	if c.modern && !c.noMeta {
		meta, _ := p["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		if _, ok := meta[modern.MetaKeyProtocolVersion]; !ok {
			meta[modern.MetaKeyProtocolVersion] = modern.ProtocolVersion
		}
		meta[modern.MetaKeyClientCapabilities] = c.caps
		meta[modern.MetaKeyClientInfo] = map[string]any{"name": c.name, "version": "2.0.0"}
		p["_meta"] = meta
	}
	return json.Marshal(p)
}

func (c *rawClient) post(ctx context.Context, body []byte, method string, params json.RawMessage) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.authz != "" {
		req.Header.Set("Authorization", c.authz)
	}
	c.mu.Lock()
	sid := c.sid
	c.mu.Unlock()
	if c.modern {
		var p struct {
			Meta map[string]any `json:"_meta"`
			Name string         `json:"name"`
			URI  string         `json:"uri"`
			Task string         `json:"taskId"`
		}
		_ = json.Unmarshal(params, &p)
		if v, ok := p.Meta[modern.MetaKeyProtocolVersion].(string); ok {
			req.Header.Set(modern.HeaderProtocolVersion, v)
		}
		if method != "" {
			req.Header.Set(modern.HeaderMethod, method)
		}
		for _, n := range []string{p.Name, p.URI, p.Task} {
			if n != "" {
				req.Header.Set(modern.HeaderName, n)
				break
			}
		}
	} else if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for k, v := range c.headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return http.DefaultClient.Do(req)
}

// call sends one request and returns its answer, answering server→client
// requests on the stream with onRequest.
func (c *rawClient) call(ctx context.Context, method string, params any) reply {
	c.t.Helper()
	p, err := c.params(method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	id := c.ids.Add(1)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": json.RawMessage(p)})
	resp, err := c.post(ctx, body, method, p)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	out := reply{Status: resp.StatusCode, Header: resp.Header}
	handle := func(msg []byte) bool {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *rpc.Error      `json:"error"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			c.t.Errorf("%s: bad message %s", method, msg)
			return false
		}
		if m.Method != "" {
			if len(m.ID) > 0 {
				out.Requests = append(out.Requests, m.Method)
				c.answer(ctx, m.ID, m.Method, m.Params)
			}
			return false
		}
		out.Result, out.Err = m.Result, m.Error
		return true
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream":
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		var data []string
		for sc.Scan() {
			l := sc.Text()
			switch {
			case l == "":
				// An event with empty data (a resumable stream's priming
				// event) dispatches nothing, as in every SSE client.
				if msg := strings.Join(data, "\n"); msg != "" && handle([]byte(msg)) {
					return out
				}
				data = nil
			case strings.HasPrefix(l, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(l, "data:"), " "))
			}
		}
	case "application/json":
		b, _ := io.ReadAll(resp.Body)
		handle(b)
	default:
		b, _ := io.ReadAll(resp.Body)
		out.Err = &rpc.Error{Code: 0, Message: strings.TrimSpace(string(b))}
	}
	return out
}

func (c *rawClient) answer(ctx context.Context, id json.RawMessage, method string, params json.RawMessage) {
	var res any = map[string]any{}
	var rerr *rpc.Error
	if c.onRequest != nil {
		res, rerr = c.onRequest(method, params)
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		msg["error"] = rerr
	} else {
		msg["result"] = res
	}
	b, _ := json.Marshal(msg)
	resp, err := c.post(ctx, b, "", nil)
	if err != nil {
		c.t.Errorf("answer %s: %v", method, err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func (c *rawClient) notify(ctx context.Context, method string, params any) {
	c.t.Helper()
	p, _ := c.params(method, params)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": json.RawMessage(p)})
	resp, err := c.post(ctx, b, method, p)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// mustOK fails the test unless r is a successful answer.
func mustOK(t *testing.T, what string, r reply) json.RawMessage {
	t.Helper()
	if r.Err != nil || r.Status >= 400 {
		t.Fatalf("%s: %v", what, r)
	}
	return r.Result
}

// field reads a string member of a JSON object by a dotted path.
func field(t *testing.T, raw json.RawMessage, path string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// getUntil polls url (as a prober does) until it answers status or ctx ends,
// and returns the last answer.
func getUntil(t *testing.T, ctx context.Context, url string, status int) (int, string) {
	t.Helper()
	for {
		code, body := get(t, url)
		if code == status {
			return code, body
		}
		select {
		case <-ctx.Done():
			return code, body
		case <-time.After(100 * time.Millisecond): // the prober's period
		}
	}
}
