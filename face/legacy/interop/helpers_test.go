package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/interop/peers"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// pollInterval is the embedded upstream's pollIntervalMs. 100 ms is the
// bridge watcher's default floor (watch.Config.MinPollInterval), so the
// bridge runs with its production watch settings and still answers fast.
const pollInterval = 100 * time.Millisecond

// clientTimeout bounds one client run (the client aborts itself after it;
// peers kills it 15 s later).
const clientTimeout = 45 * time.Second

// relatedTaskKey is the legacy related-task _meta key (L-32..L-34).
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// ---- upstream -----------------------------------------------------------

// upstreamLog counts the requests the bridge sent the embedded upstream, by
// their Mcp-Method header (M-10: it mirrors the body's method).
type upstreamLog struct {
	next http.Handler
	mu   sync.Mutex
	n    map[string]int
}

func (u *upstreamLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		u.mu.Lock()
		u.n[r.Header.Get("Mcp-Method")]++
		u.mu.Unlock()
	}
	u.next.ServeHTTP(w, r)
}

func (u *upstreamLog) count(method string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n[method]
}

// env is one bridge (legacy face) in front of one embedded modern upstream,
// both on 127.0.0.1, with the bridge's side of every HTTP exchange tapped.
type env struct {
	url string // the bridge's legacy endpoint
	up  *upstreamLog
	tap *wireTap
}

// startBridge starts the embedded modern upstream (real clock, push
// notifications on) and the legacy face in front of it with its default
// watch settings; both stop on t.Cleanup.
func startBridge(t *testing.T) *env {
	t.Helper()
	srv := demo.New(demo.Options{PollInterval: pollInterval})
	up := &upstreamLog{next: srv.Handler(), n: map[string]int{}}
	upMux := http.NewServeMux()
	upMux.Handle("/mcp", up)
	upHS := httptest.NewServer(upMux) // 127.0.0.1, ephemeral port
	t.Cleanup(func() {
		srv.Close()
		upHS.Close()
	})

	b, err := legacyface.New(legacyface.Config{
		Upstream:            upHS.URL + "/mcp",
		Store:               sessionmap.NewMemory(),
		Logger:              slog.New(slog.DiscardHandler),
		StatusNotifications: true, // as `bridge demo` runs it (L-61)
	})
	if err != nil {
		t.Fatalf("face.New: %v", err)
	}
	tap := &wireTap{next: b.Handler()}
	mux := http.NewServeMux()
	mux.Handle("/mcp", tap)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			t.Errorf("bridge shutdown: %v", err)
		}
		hs.Close()
		if err := b.Close(); err != nil {
			t.Errorf("bridge close: %v", err)
		}
	})
	return &env{url: hs.URL + "/mcp", up: up, tap: tap}
}

// ---- wire tap -----------------------------------------------------------

// wireMsg is one JSON-RPC message the bridge sent a client.
type wireMsg struct {
	// On is the method of the client request whose HTTP response carried
	// the message ("GET" for the standalone stream, "response" for the POST
	// of a client's answer to a server→client request).
	On string
	// ReqID is that request's id, and Task whether it had params.task.
	ReqID json.RawMessage
	Task  bool
	Raw   json.RawMessage
}

// wireTap sits between the test's HTTP server and the bridge: it passes
// everything through unchanged and records every JSON-RPC message of the
// bridge's responses (JSON bodies and SSE events, as they stream).
type wireTap struct {
	next http.Handler
	mu   sync.Mutex
	msgs []wireMsg
}

func (t *wireTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	on := r.Method
	var reqID json.RawMessage
	task := false
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "tap: read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var probe struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Task json.RawMessage `json:"task"`
			} `json:"params"`
		}
		on = "POST"
		if json.Unmarshal(body, &probe) == nil {
			switch {
			case probe.Method != "":
				on, reqID, task = probe.Method, probe.ID, probe.Params.Task != nil
			default:
				on = "response"
			}
		}
	}
	tw := &tapWriter{ResponseWriter: w, tap: t, on: on, reqID: reqID, task: task}
	t.next.ServeHTTP(tw, r)
	tw.finish()
}

func (t *wireTap) add(m wireMsg) {
	t.mu.Lock()
	t.msgs = append(t.msgs, m)
	t.mu.Unlock()
}

// count returns how many notifications of method the bridge sent.
func (t *wireTap) count(method string) int {
	n := 0
	for _, m := range t.all() {
		var e struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m.Raw, &e) == nil && e.ID == nil && e.Method == method {
			n++
		}
	}
	return n
}

func (t *wireTap) all() []wireMsg {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]wireMsg(nil), t.msgs...)
}

// tapWriter records what the bridge writes. SSE events are parsed as they
// complete, so a stream still open when the test checks is seen up to there.
type tapWriter struct {
	http.ResponseWriter
	tap   *wireTap
	on    string
	reqID json.RawMessage
	task  bool
	buf   []byte
}

func (w *tapWriter) sse() bool {
	return strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
}

func (w *tapWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if w.sse() {
		w.drainEvents()
	}
	return w.ResponseWriter.Write(p)
}

// FlushError and Unwrap keep http.ResponseController (used by the face's
// stream writer) working through the tap.
func (w *tapWriter) FlushError() error { return http.NewResponseController(w.ResponseWriter).Flush() }
func (w *tapWriter) Flush()            { _ = w.FlushError() }
func (w *tapWriter) Unwrap() http.ResponseWriter {
	return w.ResponseWriter
}

func (w *tapWriter) record(data []byte) {
	w.tap.add(wireMsg{On: w.on, ReqID: w.reqID, Task: w.task, Raw: append(json.RawMessage(nil), data...)})
}

// drainEvents records every complete SSE event in buf; comments
// (keep-alives) and events without data carry no message.
func (w *tapWriter) drainEvents() {
	for {
		norm := bytes.ReplaceAll(w.buf, []byte("\r\n"), []byte("\n"))
		i := bytes.Index(norm, []byte("\n\n"))
		if i < 0 {
			w.buf = norm
			return
		}
		event := norm[:i]
		w.buf = append([]byte(nil), norm[i+2:]...)
		var data []byte
		for _, line := range bytes.Split(event, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			}
		}
		if len(data) > 0 {
			w.record(data)
		}
	}
}

func (w *tapWriter) finish() {
	if w.sse() {
		w.drainEvents()
		return
	}
	if body := bytes.TrimSpace(w.buf); strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && len(body) > 0 {
		w.record(body)
	}
}

// ---- checks -------------------------------------------------------------

// sideRequest is a server→client request seen on the wire.
type sideRequest struct {
	Method, On, RelatedTaskID string
}

// checkWire validates every message the bridge sent the client against the
// official 2025-11-25 schema — the envelope, and the result, request or
// notification by its method — and returns the server→client requests.
func checkWire(t *testing.T, msgs []wireMsg) []sideRequest {
	t.Helper()
	if len(msgs) == 0 {
		t.Fatal("the wire tap saw no message from the bridge")
	}
	v := schemacheck.Load(t)
	resultDef := map[string]string{
		"initialize":   "InitializeResult",
		"tools/list":   "ListToolsResult",
		"tools/call":   "CallToolResult",
		"tasks/get":    "GetTaskResult",
		"tasks/result": "CallToolResult", // the payload of a tools/call task (L-44)
		"tasks/list":   "ListTasksResult",
		"tasks/cancel": "CancelTaskResult",
	}
	var side []sideRequest
	for _, m := range msgs {
		v.Check(t, schemacheck.Legacy, "JSONRPCMessage", m.Raw)
		var e struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(m.Raw, &e); err != nil {
			t.Errorf("bridge sent undecodable JSON on %s: %s", m.On, m.Raw)
			continue
		}
		switch {
		case e.Method != "" && e.ID != nil:
			var rel struct {
				TaskID string `json:"taskId"`
			}
			_ = json.Unmarshal(e.Params.Meta[relatedTaskKey], &rel)
			side = append(side, sideRequest{Method: e.Method, On: m.On, RelatedTaskID: rel.TaskID})
			switch e.Method {
			case "elicitation/create":
				v.Check(t, schemacheck.Legacy, "ElicitRequest", m.Raw)
			case "sampling/createMessage":
				v.Check(t, schemacheck.Legacy, "CreateMessageRequest", m.Raw)
			case "roots/list":
				v.Check(t, schemacheck.Legacy, "ListRootsRequest", m.Raw)
			}
		case e.Method != "":
			switch e.Method {
			case "notifications/tasks/status":
				v.Check(t, schemacheck.Legacy, "TaskStatusNotification", m.Raw)
			case "notifications/progress":
				v.Check(t, schemacheck.Legacy, "ProgressNotification", m.Raw)
			case "notifications/message":
				v.Check(t, schemacheck.Legacy, "LoggingMessageNotification", m.Raw)
			}
		case e.Error != nil:
			v.Check(t, schemacheck.Legacy, "JSONRPCErrorResponse", m.Raw)
		case e.Result != nil && bytes.Equal(e.ID, m.ReqID):
			def := resultDef[m.On]
			if m.On == "tools/call" && m.Task {
				def = "CreateTaskResult" // L-12
			}
			if def != "" {
				v.Check(t, schemacheck.Legacy, def, e.Result)
			}
		}
	}
	return side
}

// step returns the named step of rep, failing the test when it is missing.
func step(t *testing.T, rep *peers.Report, name string) *peers.Step {
	t.Helper()
	s := rep.Step(name)
	if s == nil {
		t.Fatalf("report has no step %q: %s", name, rep.Raw)
	}
	return s
}

// str, num, obj and list read report details (decoded JSON).
func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) float64 {
	n, _ := v.(float64)
	return n
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// checkInitTasksCapability checks the init step's declared legacy tasks
// capability: list, cancel and requests.tools.call (L-01..L-03).
func checkInitTasksCapability(t *testing.T, rep *peers.Report) {
	t.Helper()
	d := step(t, rep, "init").Details
	if got := str(d["protocolVersion"]); got != "2025-11-25" {
		t.Errorf("init: negotiated %q, want 2025-11-25", got)
	}
	caps := obj(d["tasks"])
	if caps == nil || caps["list"] == nil || caps["cancel"] == nil || obj(obj(caps["requests"])["tools"])["call"] == nil {
		t.Errorf("init: capabilities.tasks = %v, want list, cancel and requests.tools.call (L-01..L-03)", d["tasks"])
	}
	if str(d["sessionId"]) == "" {
		t.Error("init: no Mcp-Session-Id")
	}
}

// checkFailAsError checks the fail step's shape: fail_task ends failed and
// its tasks/result is the upstream's JSON-RPC error (-32603, message = the
// reason), relayed as the same JSON-RPC error (L-30, L-43).
func checkFailAsError(t *testing.T, rep *peers.Report) {
	t.Helper()
	d := step(t, rep, "fail").Details
	if got := str(d["shape"]); got != "error" {
		t.Errorf("fail: tasks/result shape %q, want a JSON-RPC error", got)
	}
	e := obj(d["error"])
	if num(e["code"]) != -32603 || !strings.Contains(str(e["message"]), "fail step") {
		t.Errorf("fail: tasks/result error %v, want -32603 naming the reason %q", e, "fail step")
	}
	if !strings.Contains(str(d["statusMessage"]), "fail step") {
		t.Errorf("fail: statusMessage %q does not carry the reason", str(d["statusMessage"]))
	}
}

// checkSecondCancel checks that cancelling a cancelled task is -32602 (L-55).
func checkSecondCancel(t *testing.T, rep *peers.Report) {
	t.Helper()
	d := step(t, rep, "cancel").Details
	if e := obj(d["secondCancel"]); num(e["code"]) != -32602 || !strings.Contains(str(e["message"]), "terminal") {
		t.Errorf("cancel: second tasks/cancel = %v, want -32602 saying the task is terminal (L-55)", d["secondCancel"])
	}
}
