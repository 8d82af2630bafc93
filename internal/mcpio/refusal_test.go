package mcpio

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
)

type startedRecorder struct {
	*httptest.ResponseRecorder
	started bool
}

func (s startedRecorder) ResponseStarted() bool { return s.started }

// go-sdk's HTTP 200 error answer is replaced by the noted refusal (JSON or
// one SSE event, with the answer's id); a result, a notification first, a
// response already started or nothing noted pass unchanged.
func TestRefusalWriter(t *testing.T) {
	refusal := &oauthmeta.UpstreamAuthError{Status: 401, Challenges: []string{"Bearer"}}
	relay := func(w http.ResponseWriter, e *oauthmeta.UpstreamAuthError, id jsonrpc.ID) {
		w.Header().Set("WWW-Authenticate", e.Challenges[0])
		w.WriteHeader(e.Status)
		_, _ = w.Write([]byte(`relayed ` + map[bool]string{true: "7"}[id.Raw() == int64(7)]))
	}
	errJSON := []byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}}`)
	for _, c := range []struct {
		name     string
		ct       string
		body     []byte
		noted    *oauthmeta.UpstreamAuthError
		started  bool
		wantCode int
	}{
		{"json error", "application/json", errJSON, refusal, false, 401},
		{"sse error", "text/event-stream", append(append([]byte("event: message\ndata: "), errJSON...), "\n\n"...), refusal, false, 401},
		{"result", "application/json", []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`), refusal, false, 200},
		{"notification first", "text/event-stream", []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"), refusal, false, 200},
		{"nothing noted", "application/json", errJSON, nil, false, 200},
		{"already started", "application/json", errJSON, refusal, true, 200},
	} {
		rec := httptest.NewRecorder()
		w := &RefusalWriter{ResponseWriter: startedRecorder{rec, c.started}, Relay: relay,
			Refusal: func() *oauthmeta.UpstreamAuthError { return c.noted }}
		w.Header().Set("Content-Type", c.ct)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(c.body)
		_, _ = w.Write([]byte("more"))
		if rec.Code != c.wantCode {
			t.Errorf("%s: HTTP %d, want %d", c.name, rec.Code, c.wantCode)
		}
		if c.wantCode == 401 && (rec.Body.String() != "relayed 7" || rec.Header().Get("WWW-Authenticate") != "Bearer") {
			t.Errorf("%s: relayed %q %v", c.name, rec.Body, rec.Header())
		}
		if c.wantCode == 200 && rec.Body.String() != string(c.body)+"more" {
			t.Errorf("%s: body %q", c.name, rec.Body)
		}
	}
}
