package edge

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// RelayAuthError answers request id on w with the upstream refusal err
// carries (a 401 or 403, oauthmeta.UpstreamAuthError) and reports whether it
// did: the same status, the upstream's challenges with resource_metadata
// pointing at the bridge's protected resource metadata for the URL the
// client dialed (RFC 6750 §3, RFC 9728 §5.1), and a JSON-RPC error body —
// never HTTP 200, since the status is what starts an OAuth client's flow.
// Behind the edge the configured relay answers (it also learns the
// upstream's resource_metadata); a face served on its own points at the
// request's own URL. The caller makes sure the response has not started.
func RelayAuthError(w http.ResponseWriter, r *http.Request, err error, id jsonrpc.ID) bool {
	e, ok := oauthmeta.AsUpstreamAuthError(err)
	if !ok || r == nil {
		return false
	}
	raw := json.RawMessage("null")
	if id.IsValid() {
		if b, err := json.Marshal(id.Raw()); err == nil {
			raw = b
		}
	}
	if er, ok := FromContext(r.Context()); ok && er.e != nil && er.e.cfg.Relay != nil {
		er.e.cfg.Relay.RelayAuthError(w, r, e, raw)
		return true
	}
	oauthmeta.WriteAuthError(w, e, oauthmeta.MetadataURL(PublicURLOf(r)), raw)
	return true
}

// PublicURLOf is the public URL of r's MCP endpoint: the edge's when r went
// through it, else what r itself says (scheme by TLS, Host, path).
func PublicURLOf(r *http.Request) *url.URL {
	if er, ok := FromContext(r.Context()); ok {
		if u, err := url.Parse(er.PublicURL()); err == nil && u.Host != "" {
			return u
		}
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return &url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path}
}

// LearnChallenges hands the relay the challenges of an upstream refusal the
// passthrough relays, so that it fetches the upstream's protected resource
// metadata from the URL they name (RFC 9728 §5.1).
func (r *Request) LearnChallenges(challenges []string) {
	if r != nil && r.e != nil && r.e.cfg.Relay != nil {
		r.e.cfg.Relay.Learn(challenges)
	}
}

// KeepRefusal returns e, carrying cause's upstream refusal when it has one:
// the JSON-RPC error a started response carries, with the refusal kept in
// the chain so that RelayAuthError can still answer with the upstream's
// status while the response has not started.
func KeepRefusal(e *rpc.Error, cause error) error {
	if ae, ok := oauthmeta.AsUpstreamAuthError(cause); ok {
		return &authFailure{rpc: e, auth: ae}
	}
	return e
}

// authFailure is KeepRefusal's error.
type authFailure struct {
	rpc  *rpc.Error
	auth *oauthmeta.UpstreamAuthError
}

func (e *authFailure) Error() string   { return e.rpc.Message }
func (e *authFailure) Unwrap() []error { return []error{e.rpc, e.auth} }
