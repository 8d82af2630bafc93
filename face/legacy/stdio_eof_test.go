package legacyface_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// eofAfterLastLine hands out its data and reports io.EOF together with the
// last byte, the way a pipe closed right after `printf` looks to a reader
// that asks for more than is left.
type eofAfterLastLine struct{ data []byte }

func (r *eofAfterLastLine) Read(p []byte) (int, error) {
	n := copy(p, r.data)
	r.data = r.data[n:]
	if len(r.data) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// lockedBuffer is the stdout of ServeStdio: responses and notifications are
// written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) lines(t *testing.T) []json.RawMessage {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(w.b.Bytes()))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		out = append(out, append(json.RawMessage(nil), sc.Bytes()...))
	}
	return out
}

// logCapture keeps every record go-sdk and the bridge log, at any level.
type logCapture struct {
	mu   sync.Mutex
	msgs []string
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, r.Level.String()+" "+r.Message)
	return nil
}
func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }

func (c *logCapture) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}

// pipedSession is what a legacy host writes in one go before closing stdin:
// the handshake, then requests it does not wait for. tasks/get names a task
// the host cannot know yet (it gets an error, which is still an answer).
func pipedSession() (in []byte, ids []string) {
	msgs := []map[string]any{
		{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-11-25",
			"capabilities": defaultCaps, "clientInfo": map[string]any{"name": "piped-host", "version": "1"}}},
		{"jsonrpc": "2.0", "method": "notifications/initialized"},
		{"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
		{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": map[string]any{"name": "echo", "arguments": map[string]any{"text": "piped"}}},
		{"jsonrpc": "2.0", "id": "four", "method": "tools/call", "params": map[string]any{"name": "slow_task",
			"arguments": map[string]any{"ms": 60000, "text": "later"}, "task": map[string]any{}}},
		{"jsonrpc": "2.0", "id": 5, "method": "tasks/get", "params": map[string]any{"taskId": "not-created-yet"}},
		{"jsonrpc": "2.0", "id": 6, "method": "tasks/list"},
		{"jsonrpc": "2.0", "id": 7, "method": "ping"},
	}
	var buf bytes.Buffer
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		buf.Write(append(b, '\n'))
		if id, ok := m["id"]; ok {
			ids = append(ids, mustJSON(id))
		}
	}
	return buf.Bytes(), ids
}

// servePiped runs ServeStdio over in (EOF right after the last line) in
// front of the demo upstream and returns what it wrote once it returned.
func servePiped(t *testing.T, in []byte, logs *logCapture) []json.RawMessage {
	t.Helper()
	up := startUpstream(t, demo.Options{})
	return servePipedTo(t, startBridge(t, up, legacyface.Config{Logger: slog.New(logs)}), in)
}

func servePipedTo(t *testing.T, br *bridgeEnv, in []byte) []json.RawMessage {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	out := &lockedBuffer{}
	served := make(chan error, 1)
	go func() { served <- br.b.ServeStdio(ctx, &eofAfterLastLine{data: in}, out) }()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeStdio did not return after stdin EOF")
	}
	return out.lines(t)
}

type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpc.Error      `json:"error"`
}

// Stdin EOF right after a burst of requests: every request read before EOF
// gets exactly one response and ServeStdio returns (was: go-sdk saw EOF,
// cancelled what was in flight and dropped the responses).
func TestStdioEOFAnswersEveryRequestReadBeforeIt(t *testing.T) {
	in, ids := pipedSession()
	logs := &logCapture{}
	msgs := servePiped(t, in, logs)
	v := schemacheck.Load(t)
	got := map[string][]envelope{}
	for _, m := range msgs {
		v.Check(t, schemacheck.Legacy, "JSONRPCMessage", m)
		var e envelope
		if err := json.Unmarshal(m, &e); err != nil {
			t.Fatalf("not JSON: %s", m)
		}
		if e.Method == "" {
			got[string(e.ID)] = append(got[string(e.ID)], e)
		}
	}
	for _, id := range ids {
		if n := len(got[id]); n != 1 {
			t.Errorf("request id %s: %d responses, want exactly 1 (output:\n%s)", id, n, joinLines(msgs))
		}
		delete(got, id)
	}
	for id := range got {
		t.Errorf("response to an id never sent: %s", id)
	}
	check := func(id string, ok func(envelope) bool) {
		t.Helper()
		for _, m := range msgs {
			var e envelope
			_ = json.Unmarshal(m, &e)
			if string(e.ID) == id && e.Method == "" && !ok(e) {
				t.Errorf("response %s: %s", id, m)
			}
		}
	}
	check("1", func(e envelope) bool {
		return e.Error == nil && bytes.Contains(e.Result, []byte(`"requests":{"tools":{"call":{}}}`))
	})
	check("2", func(e envelope) bool { return e.Error == nil && bytes.Contains(e.Result, []byte(`"echo"`)) })
	check("3", func(e envelope) bool { return e.Error == nil && bytes.Contains(e.Result, []byte(`"piped"`)) })
	check(`"four"`, func(e envelope) bool { return e.Error == nil && bytes.Contains(e.Result, []byte(`"taskId"`)) })
	check("5", func(e envelope) bool { return e.Error != nil && e.Error.Code == rpc.CodeInvalidParams })
	check("6", func(e envelope) bool { return e.Error == nil && bytes.Contains(e.Result, []byte(`"tasks"`)) })
	check("7", func(e envelope) bool { return e.Error == nil })
	for _, l := range logs.all() {
		if strings.HasPrefix(l, "ERROR") {
			t.Errorf("logged: %s", l)
		}
	}
}

// The initialize reply comes before any other response, and go-sdk never
// sees notifications/initialized before the handshake completed ("initialized
// before initialize" in the old build when stdin closed while the bridge was
// still asking the upstream for its capabilities).
func TestStdioEOFInitializeFirstAndNoInitializedBeforeInitialize(t *testing.T) {
	in, _ := pipedSession()
	logs := &logCapture{}
	msgs := servePiped(t, in, logs)
	first := -1
	for i, m := range msgs {
		var e envelope
		_ = json.Unmarshal(m, &e)
		if e.Method == "" {
			first = i
			if string(e.ID) != "1" || e.Error != nil {
				t.Errorf("first response is %s, want the initialize result", m)
			}
			break
		}
	}
	if first < 0 {
		t.Fatal("no response at all")
	}
	for _, l := range logs.all() {
		if strings.Contains(l, "before initialize") || strings.Contains(l, "invalid during session initialization") {
			t.Errorf("logged: %s", l)
		}
	}
}

// Only the handshake, then EOF: the process still answers and exits; an empty
// input ends at once.
func TestStdioEOFHandshakeOnlyAndEmptyInput(t *testing.T) {
	in, _ := pipedSession()
	first := in[:bytes.IndexByte(in, '\n')+1]
	msgs := servePiped(t, first, &logCapture{})
	if len(msgs) != 1 || !bytes.Contains(msgs[0], []byte(`"protocolVersion":"2025-11-25"`)) {
		t.Errorf("initialize then EOF: %s", joinLines(msgs))
	}
	if msgs := servePiped(t, nil, &logCapture{}); len(msgs) != 0 {
		t.Errorf("empty input: wrote %s", joinLines(msgs))
	}
}

// A request whose handling needs the client (an upstream MRTR elicitation
// becomes elicitation/create to the client) after the client closed its
// input: the bridge answers that server→client call with an error in the
// client's stead (the upstream sees a cancelled elicitation), so the request
// still gets its one response and ServeStdio returns instead of waiting
// forever.
func TestStdioEOFServerToClientCallAfterEOF(t *testing.T) {
	up := startCustomUpstream(t)
	br := startBridge(t, nil, legacyface.Config{Upstream: up.url})
	in, _ := pipedSession()
	handshake := in[:bytes.IndexByte(in, '\n')+1]
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call",
		"params": map[string]any{"name": "ask_name", "arguments": map[string]any{}}})
	msgs := servePipedTo(t, br, append(append(append([]byte(nil), handshake...),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"...), append(call, '\n')...))
	var asked, answered int
	for _, m := range msgs {
		var e envelope
		_ = json.Unmarshal(m, &e)
		switch {
		case e.Method == "elicitation/create":
			asked++
		case e.Method == "" && string(e.ID) == "9":
			answered++
		}
	}
	if asked != 1 || answered != 1 {
		t.Errorf("elicitation/create %d (want 1), tools/call responses %d (want 1):\n%s", asked, answered, joinLines(msgs))
	}
	// The face turns a failed elicitation into a cancel for the upstream:
	// the stand-in error reached it, no answer was made up.
	calls := up.rec.byMethod("tools/call")
	if len(calls) != 2 || !bytes.Contains(calls[1].Body, []byte(`"inputResponses":{"name":{"action":"cancel"}}`)) {
		t.Errorf("upstream tools/call: %d, want the retry to carry a cancelled elicitation", len(calls))
		for _, c := range calls {
			t.Logf("%s", c.Body)
		}
	}
}

func joinLines(msgs []json.RawMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.Write(m)
		b.WriteByte('\n')
	}
	return b.String()
}
