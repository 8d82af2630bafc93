package legacyface

import (
	"encoding/json"
	"net/http"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The composition root (router) hands the face every HTTP request
// through the request edge: Host and Origin checked, the body read and
// decoded once, the principal resolved (edge.FromContext). The fallbacks
// below serve the face on its own (Bridge.Handler in tests and embedding),
// where no edge ran.

// principalOf is the principal of an HTTP request: the edge's, else a hash
// of its Authorization header.
func principalOf(r *http.Request) string {
	if er, ok := edge.FromContext(r.Context()); ok {
		return er.Principal.ID
	}
	if p, ok := resolvedPrincipal(r); ok { // a resolver in front of a face served on its own (tests, embedding)
		return p
	}
	return sessionmap.PrincipalFromAuthorization(r.Header.Get("Authorization"))
}

// credentialOf is the credential forwarded upstream for r: the edge
// principal's, else the Authorization header.
func credentialOf(r *http.Request) string {
	if er, ok := edge.FromContext(r.Context()); ok {
		return er.Principal.Credential
	}
	return r.Header.Get("Authorization")
}

// forwardOf are the trace and X-Forwarded-* headers r's upstream calls
// carry (edge.Request.ForwardHeader; none without the edge).
func forwardOf(r *http.Request) http.Header {
	if er, ok := edge.FromContext(r.Context()); ok {
		return er.ForwardHeader()
	}
	return nil
}

// httpReqInfo is newReqInfo for an HTTP request of s: its credential and
// its forwarded headers, the session's copies when equal (shared.go).
func httpReqInfo(r *http.Request, s *session, method string, raw json.RawMessage) *reqInfo {
	ri := newReqInfo(method, raw, credentialOf(r))
	ri.fwd = forwardOf(r)
	s.shareRequest(ri)
	return ri
}
