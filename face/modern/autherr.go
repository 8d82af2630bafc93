package modernface

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// A call to the legacy upstream made for one client request (opening the
// principal's pool session with initialize, or the forwarded request) that
// the upstream refused with 401 or 403 is answered with that refusal — the
// same status, the upstream's challenges pointing at the bridge's protected
// resource metadata (RFC 6750 §3, RFC 9728 §5.1) — never with HTTP 200 and
// a JSON-RPC error. Once the response is an event stream (progress went
// out) only the JSON-RPC error can follow; its message names the
// authorization plainly (upstream/legacy).

// relayAuthError answers request id on w with the upstream's refusal when
// err carries one, and reports whether it did. The caller makes sure the
// response has not started.
func relayAuthError(w http.ResponseWriter, r *http.Request, err error, id jsonrpc.ID) bool {
	return edge.RelayAuthError(w, r, err, id)
}

// relayAuth is relayAuthError on a lean response that is not an event
// stream yet.
func (o *leanOut) relayAuth(r *http.Request, id jsonrpc.ID, err error) bool {
	if _, ok := oauthmeta.AsUpstreamAuthError(err); !ok {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done || o.send != nil || !relayAuthError(o.w, r, err, id) {
		return false
	}
	o.done = true
	return true
}

// keepRefusal is edge.KeepRefusal: the error keeps the upstream's refusal.
func keepRefusal(e *rpc.Error, cause error) error { return edge.KeepRefusal(e, cause) }
