package modernface_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

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

func (*eofAfterLastLine) Close() error { return nil }

// stdoutBuffer is ServeIO's output: written from several goroutines.
type stdoutBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *stdoutBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (*stdoutBuffer) Close() error { return nil }

func (w *stdoutBuffer) lines() []json.RawMessage {
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

type stdioEnvelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpc.Error      `json:"error"`
}

// servePipedModern runs ServeIO over in (EOF right after the last line) and
// returns what it wrote once ServeIO returned.
func servePipedModern(t *testing.T, e *env, in []byte) []json.RawMessage {
	t.Helper()
	ctx := ctxT(t)
	out := &stdoutBuffer{}
	served := make(chan error, 1)
	go func() { served <- e.face.ServeIO(ctx, &eofAfterLastLine{data: in}, out) }()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ServeIO: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeIO did not return after stdin EOF")
	}
	return out.lines()
}

func pipedLines(msgs []map[string]any) (in []byte, ids []string) {
	var buf bytes.Buffer
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		buf.Write(append(b, '\n'))
		if id, ok := m["id"]; ok {
			ids = append(ids, string(mustJSON(id)))
		}
	}
	return buf.Bytes(), ids
}

func stdioLines(msgs []json.RawMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.Write(m)
		b.WriteByte('\n')
	}
	return b.String()
}

// Stdin EOF right after a burst of modern requests: every request read
// before EOF gets exactly one response and ServeIO returns (was: go-sdk saw
// EOF, cancelled what was in flight and dropped the responses). Gated
// requests (missing _meta, removed methods) are answered too.
func TestStdioEOFAnswersEveryRequestReadBeforeIt(t *testing.T) {
	e := newEnv(t, envOpts{})
	in, ids := pipedLines([]map[string]any{
		{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": withMeta(nil, withTasks)},
		{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": withMeta(nil, withTasks)},
		{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": withMeta(map[string]any{"name": "echo", "arguments": map[string]any{"text": "piped"}}, withTasks)},
		{"jsonrpc": "2.0", "id": "four", "method": "tools/call", "params": withMeta(map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 1}}, withTasks)},
		{"jsonrpc": "2.0", "id": 5, "method": "tasks/get", "params": withMeta(map[string]any{"taskId": "not-created-yet"}, withTasks)},
		{"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
		{"jsonrpc": "2.0", "id": 7, "method": "tasks/result", "params": withMeta(map[string]any{"taskId": "x"}, withTasks)},
	})
	msgs := servePipedModern(t, e, in)
	v := schemacheck.Load(t)
	got := map[string][]stdioEnvelope{}
	for _, m := range msgs {
		v.Check(t, schemacheck.Modern, "JSONRPCMessage", m)
		var env stdioEnvelope
		if err := json.Unmarshal(m, &env); err != nil {
			t.Fatalf("not JSON: %s", m)
		}
		if env.Method == "" {
			got[string(env.ID)] = append(got[string(env.ID)], env)
		}
	}
	for _, id := range ids {
		if n := len(got[id]); n != 1 {
			t.Errorf("request id %s: %d responses, want exactly 1 (output:\n%s)", id, n, stdioLines(msgs))
		}
		delete(got, id)
	}
	for id := range got {
		t.Errorf("response to an id never sent: %s", id)
	}
	check := func(id string, ok func(stdioEnvelope) bool) {
		t.Helper()
		for _, m := range msgs {
			var env stdioEnvelope
			_ = json.Unmarshal(m, &env)
			if string(env.ID) == id && env.Method == "" && !ok(env) {
				t.Errorf("response %s: %s", id, m)
			}
		}
	}
	check("1", func(r stdioEnvelope) bool {
		return r.Error == nil && bytes.Contains(r.Result, []byte(`"supportedVersions"`))
	})
	check("2", func(r stdioEnvelope) bool { return r.Error == nil && bytes.Contains(r.Result, []byte(`"echo"`)) })
	check("3", func(r stdioEnvelope) bool { return r.Error == nil && bytes.Contains(r.Result, []byte(`"piped"`)) })
	check(`"four"`, func(r stdioEnvelope) bool {
		return r.Error == nil && bytes.Contains(r.Result, []byte(`"resultType":"task"`)) && bytes.Contains(r.Result, []byte(`"taskId"`))
	})
	check("5", func(r stdioEnvelope) bool { return r.Error != nil })
	check("6", func(r stdioEnvelope) bool { return r.Error != nil && r.Error.Code == rpc.CodeInvalidParams })  // M-37
	check("7", func(r stdioEnvelope) bool { return r.Error != nil && r.Error.Code == rpc.CodeMethodNotFound }) // M-66
}

// Empty input ends at once with nothing written; one request then EOF is
// still answered.
func TestStdioEOFEmptyAndSingleRequest(t *testing.T) {
	e := newEnv(t, envOpts{})
	if msgs := servePipedModern(t, e, nil); len(msgs) != 0 {
		t.Errorf("empty input: wrote %s", stdioLines(msgs))
	}
	in, _ := pipedLines([]map[string]any{
		{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": withMeta(map[string]any{"name": "echo", "arguments": map[string]any{"text": "alone"}}, withTasks)},
	})
	msgs := servePipedModern(t, e, in)
	if len(msgs) != 1 || !bytes.Contains(msgs[0], []byte(`"alone"`)) {
		t.Errorf("one request then EOF: %s", stdioLines(msgs))
	}
}
