package mcpio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/rpc"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) Close() error                { return nil }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The shared stdio connection: a gated call is answered without go-sdk
// seeing it, a reused id drops the old call's record, and the input's end
// is held back while a call is unanswered — a server→client call made
// meanwhile is answered in the client's stead — then reported.
func TestConnHoldsEndUntilAnswered(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}
{"jsonrpc":"2.0","id":2,"method":"refused","params":{}}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}
`
	out := &syncBuf{}
	done := map[string]int{}
	var n int
	tr := WrapTransport(&mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: out},
		func(ctx context.Context, cancel context.CancelFunc, c mcp.Connection) mcp.Connection {
			return NewConn(ctx, cancel, c, ConnHooks{SessionID: "s", HoldEnd: true,
				Gate: func(req *jsonrpc.Request) *rpc.Error {
					if req.Method == "refused" {
						return rpc.Errorf(rpc.CodeMethodNotFound, "no such method")
					}
					return nil
				},
				Accept: func(req *jsonrpc.Request) func() {
					n++
					k := string(rune('a' + n - 1))
					return func() { done[k]++ }
				}})
		})
	ctx := context.Background()
	c, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.SessionID() != "s" {
		t.Errorf("session id %q", c.SessionID())
	}
	for i := range 2 {
		m, err := c.Read(ctx)
		if req, ok := m.(*jsonrpc.Request); err != nil || !ok || req.Method != "tools/call" {
			t.Fatalf("read %d: %v %v", i, m, err)
		}
	}
	if done["a"] != 1 || n != 2 {
		t.Errorf("reused id: first record dropped %d times, %d accepted; want 1, 2", done["a"], n)
	}
	if !strings.Contains(out.String(), `"id":2`) || !strings.Contains(out.String(), "no such method") {
		t.Errorf("gated call not answered: %s", out.String())
	}
	sid, _ := jsonrpc.MakeID("q1")
	if err := c.Write(ctx, &jsonrpc.Request{ID: sid, Method: "elicitation/create"}); err != nil {
		t.Fatal(err)
	}
	m, err := c.Read(ctx) // the input ended, one call is open
	if resp, ok := m.(*jsonrpc.Response); err != nil || !ok || resp.ID != sid || resp.Error == nil {
		t.Fatalf("after the end: %v %v, want the server→client call answered in the client's stead", m, err)
	}
	cid, _ := jsonrpc.MakeID(float64(1))
	if err := c.Write(ctx, &jsonrpc.Response{ID: cid, Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if done["b"] != 1 {
		t.Errorf("answered call's record dropped %d times, want 1", done["b"])
	}
	if _, err := c.Read(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("read after every call was answered: %v, want EOF", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if done["a"] != 1 || done["b"] != 1 {
		t.Errorf("records dropped %v; each once", done)
	}
}
