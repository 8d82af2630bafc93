package oplog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// provokeGoSDKWarning makes go-sdk's stateful HTTP handler log its WARN
// telling the operator to "set StreamableHTTPOptions.Stateless" (a
// 2026-07-28 request reaching a 2025-11-25 handler), with logger l.
func provokeGoSDKWarning(t *testing.T, l *slog.Logger) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "x", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: l})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("go-sdk answered %d %s; the probe no longer reaches its warning", w.Code, w.Body)
	}
}

// At the default level go-sdk's internal advice never reaches the
// operator's log; the bridge's own records do; --log-libraries shows it,
// tagged with the library.
func TestLibraryRecordsKeptOutByDefault(t *testing.T) {
	var buf bytes.Buffer
	h, err := NewHandler(&buf, FormatText, slog.LevelInfo, false)
	if err != nil {
		t.Fatal(err)
	}
	l := slog.New(h)
	provokeGoSDKWarning(t, l)
	l.Warn("upstream unreachable", "upstream", "u")
	out := buf.String()
	if strings.Contains(out, "Stateless") {
		t.Errorf("go-sdk internals at the default level:\n%s", out)
	}
	if !strings.Contains(out, "upstream unreachable") {
		t.Errorf("the bridge's own WARN is missing:\n%s", out)
	}

	buf.Reset()
	if h, err = NewHandler(&buf, FormatText, slog.LevelInfo, true); err != nil {
		t.Fatal(err)
	}
	provokeGoSDKWarning(t, slog.New(h))
	if out := buf.String(); !strings.Contains(out, "Stateless") || !strings.Contains(out, "library=go-sdk") {
		t.Errorf("with libraries on, want the go-sdk record tagged library=go-sdk:\n%s", out)
	}
}

// --log-format json: one JSON object per line.
func TestJSONFormat(t *testing.T) {
	var buf bytes.Buffer
	h, err := NewHandler(&buf, FormatJSON, slog.LevelInfo, false)
	if err != nil {
		t.Fatal(err)
	}
	slog.New(h).Info("serving MCP clients", "endpoint", "http://127.0.0.1:8080/mcp")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec["msg"] != "serving MCP clients" || rec["level"] != "INFO" {
		t.Fatalf("record %q: %v", buf.String(), err)
	}
	if _, err := NewHandler(&buf, "yaml", slog.LevelInfo, false); err == nil || !strings.Contains(err.Error(), "want text or json") {
		t.Errorf("unknown format: %v", err)
	}
}

type unreachable struct{}

func (unreachable) Error() string   { return "connection refused" }
func (unreachable) Temporary() bool { return true }

// An outage is logged once when it starts and once when it ends, however
// many requests fail meanwhile; a JSON-RPC error answer counts as reachable.
func TestUpstreamHealthLogsOncePerChange(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	u := &UpstreamHealth{Log: slog.New(slog.NewJSONHandler(&buf, nil)), Target: "http://up/mcp", Now: func() time.Time { return now }}
	u.Observe("tools/call", nil)
	u.Observe("tasks/get", rpc.Errorf(rpc.CodeInvalidParams, "unknown task"))
	for range 14 {
		u.Observe("tasks/get", unreachable{})
	}
	u.Observe("tasks/get", errors.Join(errors.New("cancelled by the client"), contextCanceled))
	now = now.Add(90 * time.Second)
	u.Observe("tasks/get", nil)
	u.Observe("tasks/get", nil)
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3 (reachable, unreachable, reachable again):\n%s", len(recs), buf.String())
	}
	if recs[0]["level"] != "INFO" || recs[1]["level"] != "WARN" || recs[2]["level"] != "INFO" {
		t.Errorf("levels %v %v %v, want INFO WARN INFO", recs[0]["level"], recs[1]["level"], recs[2]["level"])
	}
	if recs[2]["failed_requests"] != float64(14) || recs[2]["down_for"] != "1m30s" {
		t.Errorf("recovery record = %v, want 14 failed requests over 1m30s", recs[2])
	}
}

var contextCanceled = context.Canceled

// Refused requests are logged at INFO, failures at WARN, successes not at
// all; repeats within the interval are counted into the next line.
func TestRefusalsLogged(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	r := &Refusals{Log: slog.New(slog.NewJSONHandler(&buf, nil)), Every: 10 * time.Second, Now: func() time.Time { return now }}
	r.Observe("legacy", "tasks/get", "ok", "c")
	r.Observe("legacy", "tasks/get", "tool_error", "c")
	r.Observe("legacy", "tasks/get", "invalid_params", "c")
	r.Observe("legacy", "tasks/get", "invalid_params", "c")
	r.Observe("legacy", "tasks/get", "invalid_params", "c")
	r.Observe("modern", "tools/call", "upstream_unavailable", "c")
	now = now.Add(11 * time.Second)
	r.Observe("legacy", "tasks/get", "invalid_params", "c")
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, m)
	}
	if len(recs) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(recs), buf.String())
	}
	if recs[0]["level"] != "INFO" || recs[0]["msg"] != "refused a client request" || !strings.Contains(recs[0]["reason"].(string), "-32602") {
		t.Errorf("refusal line = %v", recs[0])
	}
	if recs[1]["level"] != "WARN" || recs[1]["era"] != "modern" {
		t.Errorf("failure line = %v", recs[1])
	}
	if recs[2]["similar_since_last"] != float64(2) {
		t.Errorf("after the interval = %v, want 2 suppressed", recs[2])
	}
}

func TestRefusalNeverLogsASecretClientName(t *testing.T) {
	var buf bytes.Buffer
	r := &Refusals{Log: slog.New(slog.NewTextHandler(&buf, nil))}
	r.Observe("legacy", "tools/call", "invalid_params", "Bearer sk-live-4f9a8b7c6d5e4f3a2b1c")
	if strings.Contains(buf.String(), "sk-live") || !strings.Contains(buf.String(), "client=other") {
		t.Errorf("client name not masked: %s", buf.String())
	}
}

// At debug level, Badger's routine lines (the bulk of a debug log) stay out
// unless libraries are asked for; the bridge's own debug lines stay in.
func TestBadgerInternalsKeptOutAtDebug(t *testing.T) {
	for _, with := range []bool{false, true} {
		var buf bytes.Buffer
		h, err := NewHandler(&buf, FormatText, slog.LevelDebug, with)
		if err != nil {
			t.Fatal(err)
		}
		l := slog.New(h)
		st, err := sessionmap.OpenBadger(t.TempDir(), sessionmap.WithLogger(l))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		l.Debug("face: task created")
		out := buf.String()
		if got := strings.Contains(out, "badger: "); got != with {
			t.Errorf("libraries %v: Badger lines present = %v:\n%s", with, got, out)
		}
		if with && !strings.Contains(out, "library=badger") {
			t.Errorf("Badger lines not tagged library=badger:\n%s", out)
		}
		if !strings.Contains(out, "face: task created") {
			t.Errorf("the bridge's own debug line is missing:\n%s", out)
		}
	}
}

// No refusal line sends the operator looking for lines that may not exist.
func TestRefusalTextsStandAlone(t *testing.T) {
	for outcome, rt := range refusalText {
		if strings.Contains(rt.text, "warning") {
			t.Errorf("%s: %q refers to warnings", outcome, rt.text)
		}
	}
}

// A refusal line says the concrete reason the client was given, not a
// generic "e.g.", and never a credential the message may carry.
func TestRefusalSaysTheConcreteReason(t *testing.T) {
	var buf bytes.Buffer
	r := &Refusals{Log: slog.New(slog.NewTextHandler(&buf, nil))}
	r.ObserveReason("legacy", "initialize", "invalid_request", "c",
		"Invalid Request: this session is already initialized; start a new session without Mcp-Session-Id to initialize again")
	r.ObserveReason("legacy", "tools/call", "invalid_params", "c", "upstream said: bad token Bearer abc.def and key sk_live_0123456789abcdef0123456789abcdef")
	out := buf.String()
	for _, want := range []string{"invalid request (-32600): Invalid Request: this session is already initialized", "[redacted]"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"e.g.", "abc.def", "sk_live"} {
		if strings.Contains(out, bad) {
			t.Errorf("log shows %q:\n%s", bad, out)
		}
	}
}
