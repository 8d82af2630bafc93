package modernface_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// BenchmarkLeanToolsCall measures one synchronous tools/call through the
// face's HTTP handler (in process, upstream on loopback); its allocations
// per call are the figure to watch, being stable on a loaded machine.
func BenchmarkLeanToolsCall(b *testing.B) {
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	url, stop, err := fx.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	pool, err := legacyup.NewPool(legacyup.Config{Endpoint: url, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	f, err := modernface.New(modernface.Options{Upstream: pool, Store: sessionmap.NewMemory(), Logger: quietLogger()})
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
