package modernface_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// env is a modern face in front of the in-repo legacy fixture, on loopback.
type env struct {
	t     *testing.T
	fx    *legacyfixture.Server
	pool  *legacyup.Pool
	store *sessionmap.Memory
	face  *modernface.Face
	url   string
	ids   atomic.Int64
}

type envOpts struct {
	face    func(*modernface.Options)
	stdio   bool
	scale   float64
	upOpts  func(*legacyup.Config)
	fixture func(*legacyfixture.Options)
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	if o.scale == 0 {
		o.scale = 0.05
	}
	fxo := legacyfixture.Options{TimeScale: o.scale, PollInterval: 20 * time.Millisecond}
	if o.fixture != nil {
		o.fixture(&fxo)
	}
	e := &env{t: t, fx: legacyfixture.New(fxo)}
	url, stop, err := e.fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	cfg := legacyup.Config{Endpoint: url, Logger: quietLogger()}
	if o.upOpts != nil {
		o.upOpts(&cfg)
	}
	e.pool, err = legacyup.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.pool.Close() })
	e.store = sessionmap.NewMemory()
	fo := modernface.Options{Upstream: e.pool, Store: e.store, Logger: quietLogger(), PollInterval: 50 * time.Millisecond}
	if o.face != nil {
		o.face(&fo)
	}
	e.face, err = modernface.New(fo)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.face)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		e.face.Close()
	})
	e.url = srv.URL
	return e
}

// newEnvAt is newEnv in front of an upstream the test started itself.
func newEnvAt(t *testing.T, upstreamURL string) *env {
	t.Helper()
	e := &env{t: t}
	var err error
	e.pool, err = legacyup.NewPool(legacyup.Config{Endpoint: upstreamURL, Logger: quietLogger(), InitTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.pool.Close() })
	e.store = sessionmap.NewMemory()
	e.face, err = modernface.New(modernface.Options{Upstream: e.pool, Store: e.store, Logger: quietLogger(), PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.face)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		e.face.Close()
	})
	e.url = srv.URL
	return e
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// clientCaps are the per-request capabilities a test client declares.
type clientCaps struct {
	tasks, elicitation, sampling, roots bool
}

var (
	withTasks    = clientCaps{tasks: true, elicitation: true, sampling: true}
	withoutTasks = clientCaps{elicitation: true}
)

func (c clientCaps) object() map[string]any {
	m := map[string]any{}
	if c.tasks {
		m["extensions"] = map[string]any{modern.TasksExtensionID: map[string]any{}}
	}
	if c.elicitation {
		m["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	if c.sampling {
		m["sampling"] = map[string]any{}
	}
	if c.roots {
		m["roots"] = map[string]any{}
	}
	return m
}

// withMeta adds the per-request _meta to params (M-01).
func withMeta(params map[string]any, caps clientCaps) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[modern.MetaKeyProtocolVersion] = modern.ProtocolVersion
	meta[modern.MetaKeyClientCapabilities] = caps.object()
	meta[modern.MetaKeyClientInfo] = map[string]any{"name": "face-test", "version": "1"}
	params["_meta"] = meta
	return params
}

// reply is one HTTP exchange with the face.
type reply struct {
	status        int
	body          json.RawMessage   // the JSON-RPC response
	notifications []json.RawMessage // notifications before it (SSE)
	result        map[string]any
	errCode       int64
	errData       json.RawMessage
	errMsg        string
}

// request sends body (a whole JSON-RPC message) with the standard headers
// of modern.RequestHeaders, adjusted by hdr (a "" value deletes a header).
func (e *env) request(ctx context.Context, body []byte, hdr map[string]string) reply {
	e.t.Helper()
	h, err := modern.RequestHeaders(body)
	if err != nil {
		h = modern.Header{}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode}
	var msgs []json.RawMessage
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				d = strings.TrimSpace(d)
				if d != "" {
					msgs = append(msgs, json.RawMessage(d))
					var probe struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					_ = json.Unmarshal([]byte(d), &probe)
					if probe.ID != nil && probe.Method == "" {
						break
					}
				}
			}
		}
	} else {
		b, _ := io.ReadAll(resp.Body)
		if len(bytes.TrimSpace(b)) > 0 {
			msgs = append(msgs, b)
		}
	}
	for _, m := range msgs {
		var probe struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result map[string]any  `json:"result"`
			Error  *struct {
				Code    int64           `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(m, &probe) != nil {
			continue
		}
		if probe.Method != "" {
			r.notifications = append(r.notifications, m)
			continue
		}
		r.body = m
		r.result = probe.Result
		if probe.Error != nil {
			r.errCode, r.errMsg, r.errData = probe.Error.Code, probe.Error.Message, probe.Error.Data
		}
	}
	return r
}

// rpc sends method with params (given _meta by caps) and returns the reply.
func (e *env) rpc(ctx context.Context, method string, params map[string]any, caps clientCaps) reply {
	e.t.Helper()
	id := e.ids.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": withMeta(params, caps)})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.request(ctx, body, nil)
}

// ok fails the test unless r is a successful result.
func (r reply) ok(t *testing.T) map[string]any {
	t.Helper()
	if r.result == nil {
		t.Fatalf("HTTP %d, body %s: want a result", r.status, r.body)
	}
	return r.result
}

// resultJSON returns the result member of the reply.
func (r reply) resultJSON(t *testing.T) json.RawMessage {
	t.Helper()
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(r.body, &m); err != nil || m.Result == nil {
		t.Fatalf("no result in %s", r.body)
	}
	return m.Result
}

// pollUntil polls tasks/get until cond holds or ctx ends.
func (e *env) pollUntil(ctx context.Context, taskID string, caps clientCaps, cond func(map[string]any) bool) map[string]any {
	e.t.Helper()
	for {
		r := e.rpc(ctx, "tasks/get", map[string]any{"taskId": taskID}, caps)
		res := r.ok(e.t)
		if cond(res) {
			return res
		}
		select {
		case <-ctx.Done():
			e.t.Fatalf("task %s never reached the expected state; last %v", taskID, res)
		case <-time.After(20 * time.Millisecond): // the client's poll interval, not synchronisation
		}
	}
}

func terminal(res map[string]any) bool {
	switch res["status"] {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}

func statusIs(s string) func(map[string]any) bool {
	return func(res map[string]any) bool { return res["status"] == s || terminal(res) }
}
