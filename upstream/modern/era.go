package modernup

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/era"
)

// ProbeEra decides the upstream's era with server/discover (M-06, M-07): it
// sends the probe and hands its outcome to era.Upstream, which decides. An
// unreachable upstream gives era.Unknown and the ErrUnavailable error; an
// upstream that refuses the probe's credentials (HTTP 401/403) gives
// era.Unknown and the ErrUnauthorized error. The caller caches the answer
// and re-probes when it stops holding (M-08).
func (c *Client) ProbeEra(ctx context.Context) (era.Era, error) {
	return c.ProbeEraAs(ctx, "")
}

// ProbeEraAs is ProbeEra with authorization as the probe's Authorization
// header ("" for none): an upstream that requires authorization answers
// the probe of a request that carries valid credentials.
func (c *Client) ProbeEraAs(ctx context.Context, authorization string) (era.Era, error) {
	d, err := c.Discover(ctx, CallOptions{Authorization: authorization})
	if err == nil {
		return era.Upstream(era.Probe{Result: d}), nil
	}
	p := era.Probe{}
	switch {
	case c.Shared && errors.Is(err, context.DeadlineExceeded):
		// stdio: a legacy server may stay silent on an unknown method.
		p.Silent = true
	case errors.Is(err, ErrUnavailable), errors.Is(err, context.Canceled), errors.Is(err, ErrUnauthorized):
		// A 401/403 is the upstream's HTTP layer speaking, not its MCP
		// era: the probe is repeated with a request's credentials.
		return era.Upstream(era.Probe{Unreachable: true}), err
	default:
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			p.Error = we
		}
	}
	return era.Upstream(p), nil
}
