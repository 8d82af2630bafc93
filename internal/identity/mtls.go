package identity

import (
	"context"
	"net/http"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// MTLS is the mtls mode: the principal is the subject of the client
// certificate the TLS handshake verified (Request.TLS.VerifiedChains, so the
// server's tls.Config must set ClientCAs and a ClientAuth that verifies). A
// request without a verified certificate is refused with 401. Credential
// is the Authorization header, if any, for the upstream; Expires is the
// certificate's NotAfter.
type MTLS struct{}

// Resolve implements Resolver.
func (MTLS) Resolve(_ context.Context, req Request) (Principal, error) {
	if req.TLS == nil || len(req.TLS.VerifiedChains) == 0 || len(req.TLS.VerifiedChains[0]) == 0 {
		return Principal{}, &Error{Status: http.StatusUnauthorized, Description: "this endpoint requires a verified client certificate (mutual TLS)"}
	}
	leaf := req.TLS.VerifiedChains[0][0]
	id := sessionmap.PrincipalFromMTLSSubject(leaf.Subject.String())
	if id == "" {
		return Principal{}, &Error{Status: http.StatusUnauthorized, Description: "the client certificate has an empty subject"}
	}
	return Principal{ID: id, Credential: req.Header.Get("Authorization"), Expires: leaf.NotAfter}, nil
}
