package modernface

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/edge"
)

// A call to the legacy upstream made for one client request (opening the
// principal's pool session with initialize, or the forwarded request) that
// the upstream refused with 401 or 403 is answered with that refusal — the
// same status, the upstream's challenges pointing at the bridge's protected
// resource metadata (RFC 6750 §3, RFC 9728 §5.1) — never with HTTP 200 and
// a JSON-RPC error. Once the response is an event stream (progress went
// out) only the JSON-RPC error can follow; its message names the
// authorization plainly (upstream/legacy).

// relayAuth is edge.RelayAuthError on a lean response that is not an event
// stream yet.
func (o *leanOut) relayAuth(r *http.Request, id jsonrpc.ID, err error) bool {
	o.mu.Lock() // taken on error paths only; edge.RelayAuthError tells a refusal apart
	defer o.mu.Unlock()
	if o.done || o.send != nil || !edge.RelayAuthError(o.w, r, err, id) {
		return false
	}
	o.done = true
	return true
}
