package face_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/legacy/upstream"
	"github.com/tasksbridge/tasksbridge/legacy/upstream/fixture"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/modern/face"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// BenchmarkLeanToolsCall measures one synchronous tools/call through the
// face's HTTP handler (in process, upstream on loopback); its allocations
// per call are the figure to watch, being stable on a loaded machine.
func BenchmarkLeanToolsCall(b *testing.B) {
	fx := fixture.New(fixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	url, stop, err := fx.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	pool, err := upstream.NewPool(upstream.Config{Endpoint: url, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	f, err := face.New(face.Options{Upstream: pool, Store: sessionmap.NewMemory(), Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
		"params": withMeta(map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}, withTasks)})
	h, _ := modern.RequestHeaders(body)
	do := func() {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		for k, v := range h {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"hi"`)) {
			b.Fatalf("HTTP %d %s", rec.Code, rec.Body.Bytes())
		}
	}
	do() // the principal's upstream session and its tools
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		do()
	}
}
