package mcpio

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
)

// RefusalWriter stands between go-sdk's HTTP handler and the response of a
// request the faces serve through go-sdk: it holds go-sdk's status back
// until the first write, and when that write is the answer to a request
// whose handler failed with an upstream refusal (HTTP 401/403, RFC 6750 §3),
// Relay writes the refusal instead — with the answer's id — and go-sdk's
// bytes are dropped. go-sdk answers a handler error with HTTP 200, which an
// OAuth client does not take as a reason to authorize.
type RefusalWriter struct {
	http.ResponseWriter
	// Refusal returns the refusal the request's handler noted (nil: none).
	Refusal func() *oauthmeta.UpstreamAuthError
	// Relay writes e to w as the answer to id.
	Relay func(w http.ResponseWriter, e *oauthmeta.UpstreamAuthError, id jsonrpc.ID)

	mu      sync.Mutex
	code    int  // held-back status (0: none yet)
	decided bool // the response is go-sdk's, or the relay
	relayed bool
}

// ResponseStarter is implemented by writers that can commit a response on
// their own (keep-alives on an event stream): a started response is never
// replaced.
type ResponseStarter interface{ ResponseStarted() bool }

func (w *RefusalWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.relayed:
	case w.decided:
		w.ResponseWriter.WriteHeader(code)
	case w.code == 0:
		w.code = code
	}
}

func (w *RefusalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.decided {
		w.decideLocked(p)
	}
	if w.relayed {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// decideLocked relays the refusal when p is go-sdk's answer and nothing
// went out yet; otherwise it lets the held-back status through.
func (w *RefusalWriter) decideLocked(p []byte) {
	w.decided = true
	var e *oauthmeta.UpstreamAuthError
	if w.Refusal != nil {
		e = w.Refusal()
	}
	st, ok := w.ResponseWriter.(ResponseStarter)
	if e != nil && w.Relay != nil && !(ok && st.ResponseStarted()) {
		if id, isAnswer := errorAnswerID(w.Header().Get("Content-Type"), p); isAnswer {
			w.Relay(w.ResponseWriter, e, id)
			w.relayed = true
			return
		}
	}
	if w.code != 0 {
		w.ResponseWriter.WriteHeader(w.code)
	}
}

// FlushError commits what was held back (a flush commits) and flushes.
func (w *RefusalWriter) FlushError() error {
	w.mu.Lock()
	if !w.decided && w.code != 0 {
		w.decided = true
		w.ResponseWriter.WriteHeader(w.code)
	}
	relayed := w.relayed
	w.mu.Unlock()
	if relayed {
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *RefusalWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the real writer's deadlines.
func (w *RefusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// errorAnswerID reads the id of the JSON-RPC error response in one go-sdk
// write (an application/json body or one SSE event).
func errorAnswerID(contentType string, p []byte) (jsonrpc.ID, bool) {
	msg := p
	if strings.HasPrefix(contentType, "text/event-stream") {
		data, err := NewEventReader(bytes.NewReader(p), len(p)+1).Next()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		msg = data
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || len(m.Error) == 0 {
		return jsonrpc.ID{}, false
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil
}
