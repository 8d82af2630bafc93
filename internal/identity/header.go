package identity

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// GatewayHeader is the header:NAME mode: an authenticating gateway in front
// of the bridge (a --trusted-proxy) names the user in header Name.
//
// The header is believed only when Request.TrustedPeer is set; from any
// other peer it is ignored as if absent (the edge strips it too; this is
// the second lock). A request without the header is anonymous (principal
// "", so its tasks are scoped to its session), not refused: the gateway is
// the authority on authentication, and a request it let through without
// naming a user is one it chose to pass unauthenticated; answering 401 here
// would send the client a challenge for credentials the bridge does not
// take. Credential is the Authorization header, if any, for the upstream.
type GatewayHeader struct {
	name   string // canonical form
	log    *slog.Logger
	warned atomic.Bool
}

func newHeader(name string, cfg Config) (*GatewayHeader, error) {
	c, err := canonicalHeader(name)
	if err != nil {
		return nil, err
	}
	return &GatewayHeader{name: c, log: cfg.Logger}, nil
}

// Resolve implements Resolver.
func (g *GatewayHeader) Resolve(_ context.Context, req Request) (Principal, error) {
	p := Principal{Credential: req.Header.Get("Authorization")}
	vals := req.Header.Values(g.name)
	if len(vals) == 0 {
		return p, nil
	}
	if !req.TrustedPeer {
		if !g.warned.Swap(true) {
			g.log.Warn("ignored an identity header from a peer that is not a --trusted-proxy; its request is anonymous (logged once)", "header", g.name)
		}
		return p, nil
	}
	if len(vals) > 1 {
		return Principal{}, &Error{Status: http.StatusBadRequest, Code: "invalid_request", Description: "the identity header " + g.name + " was sent more than once"}
	}
	p.ID = sessionmap.PrincipalFromGatewayUser(g.name, strings.TrimSpace(vals[0]))
	return p, nil
}

// Name is the canonical header name the gateway sets.
func (g *GatewayHeader) Name() string { return g.name }
