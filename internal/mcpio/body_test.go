package mcpio

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
)

var testWords = BodyWords{TooLarge: "too large: over %d bytes", Unreadable: "unreadable"}

// A body within the limit is returned whole; a larger one is answered 413
// in the server's words with the limit.
func TestReadBody(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	w := httptest.NewRecorder()
	got, ok := ReadBody(w, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body)), 1<<10, testWords)
	if !ok || string(got) != body {
		t.Fatalf("ReadBody = %q, %v; want the body, true", got, ok)
	}
	w = httptest.NewRecorder()
	if _, ok := ReadBody(w, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body)), 8, testWords); ok {
		t.Fatal("ReadBody over the limit reported ok")
	}
	if w.Code != http.StatusRequestEntityTooLarge || strings.TrimSpace(w.Body.String()) != "too large: over 8 bytes" {
		t.Fatalf("over the limit: %d %q", w.Code, w.Body.String())
	}
	w = httptest.NewRecorder()
	if _, ok := ReadBody(w, httptest.NewRequest(http.MethodPost, "/mcp", failingReader{}), 8, testWords); ok {
		t.Fatal("ReadBody of a failing body reported ok")
	}
	if w.Code != http.StatusBadRequest || strings.TrimSpace(w.Body.String()) != "unreadable" {
		t.Fatalf("failing body: %d %q", w.Code, w.Body.String())
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// DecodeChecked refuses a body nested deeper than the edge allows with a
// depth error, and decodes a plain one.
func TestDecodeChecked(t *testing.T) {
	deep := strings.Repeat("[", rawjson.DefaultMaxDepth+1) + strings.Repeat("]", rawjson.DefaultMaxDepth+1)
	var de *rawjson.DepthError
	if _, err := DecodeChecked([]byte(deep)); !errors.As(err, &de) {
		t.Fatalf("DecodeChecked(too deep) = %v, want a *rawjson.DepthError", err)
	}
	m, err := DecodeChecked([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil || m == nil {
		t.Fatalf("DecodeChecked(plain) = %v, %v", m, err)
	}
}
