package router

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// msgDraining is the JSON-RPC error of a request that reached a draining
// replica: the request was not acted on, so sending it again is safe.
const msgDraining = "this bridge replica is shutting down and did not act on the request; retry the request (another replica or this one after restart will answer it)"

// refuseDraining answers a request that arrived after Drain: HTTP 503 with
// Retry-After and a JSON-RPC -32603 with the request's id (null when the
// body has none or cannot be read), so a client that has not seen /readyz
// turn 503 yet gets an answer it can act on instead of a refused
// connection. Connection: close sends its next request to a new connection,
// which a load balancer routes to another replica.
func (s *Server) refuseDraining(w http.ResponseWriter, r *http.Request) {
	id := json.RawMessage("null")
	if r.Method == http.MethodPost && r.Body != nil {
		// Bounded like every body (and by the listener's body-read
		// deadline); a body that cannot be read answers with a null id.
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
		if err == nil {
			id = requestID(b)
		}
	}
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Connection", "close")
	mcpio.WriteRPCErrorRaw(w, http.StatusServiceUnavailable, id, rpc.Errorf(rpc.CodeInternalError, "%s", msgDraining))
}

// requestID is the id of the JSON-RPC request in body when it is a string
// or a number, else null (a notification, a batch, no JSON).
func requestID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 {
		return json.RawMessage("null")
	}
	switch m.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return m.ID
	}
	return json.RawMessage("null")
}
