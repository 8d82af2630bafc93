package router

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// An upstream that requires authorization answers an anonymous era probe
// with 401 (RFC 6750 §3): that is its HTTP layer, not its MCP era. The era
// then stays unknown (never legacy, never remembered), the probe is sent
// again with the credentials of the next request that carries some, and a
// request the era cannot be decided for gets the upstream's own refusal —
// the same status and challenges, pointing at the bridge's protected
// resource metadata (RFC 9728 §5.1) — so an OAuth client starts its flow.
// Nothing answers -32022 because of an anonymous probe.

type probeCredentialKey struct{}

// withProbeCredential hands the era probe the credential of the request
// that needs the era ("" for none).
func withProbeCredential(ctx context.Context, credential string) context.Context {
	if credential == "" {
		return ctx
	}
	return context.WithValue(ctx, probeCredentialKey{}, credential)
}

func probeCredential(ctx context.Context) string {
	c, _ := ctx.Value(probeCredentialKey{}).(string)
	return c
}

// relayEraRefusal answers a request whose upstream era could not be decided
// because the upstream refused the probe's credentials with that refusal,
// and reports whether it did (false: err is something else).
func (s *Server) relayEraRefusal(w http.ResponseWriter, r *http.Request, ex *exchange, err error) bool {
	e, ok := oauthmeta.AsUpstreamAuthError(err)
	if !ok {
		return false
	}
	id := jsonrpc.ID{}
	if ex != nil && ex.id != "" {
		var v any
		if json.Unmarshal([]byte(ex.id), &v) == nil {
			id, _ = jsonrpc.MakeID(v)
		}
	}
	return edge.RelayAuthError(w, r, e, id)
}

// authProbe logs, once per state, that the era waits for an authorized
// request.
type authProbe struct{ logged atomic.Bool }

// refused notes an era probe the upstream refused; false when this was
// logged already.
func (a *authProbe) refused() bool { return a.logged.CompareAndSwap(false, true) }

// decided ends the refused state (a probe got an answer).
func (a *authProbe) decided() { a.logged.Store(false) }

// probeRefused reports whether err is a probe the upstream refused for its
// credentials (the upstream is reachable; its era is still unknown).
func probeRefused(err error) bool { return modernup.Unauthorized(err) || legacyup.Unauthorized(err) }

// readyWith is a readiness check that passed with a remark for the body.
type readyWith string

func (n readyWith) Error() string { return string(n) }

// tlsError is the meter's code bucket of a failed TLS handshake with the
// upstream (metrics.CodeTLS): still a failure to reach it. Its text is the
// cause in plain words (upstreamtls.go), for the reachability log.
type tlsError struct{ cause string }

func (e tlsError) Error() string {
	if e.cause != "" {
		return e.cause
	}
	return "upstream TLS handshake failed"
}
func (tlsError) Temporary() bool  { return true }
func (tlsError) TLSFailure() bool { return true }

// transportFailure is the meter's error for an upstream exchange that
// failed before any HTTP answer.
func transportFailure(err error) error {
	if metrics.IsTLSFailure(err) {
		var te *UpstreamTLSError
		if errors.As(err, &te) {
			return tlsError{cause: te.Cause}
		}
		return tlsError{}
	}
	return transportError{}
}
