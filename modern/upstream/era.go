package upstream

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Era is the protocol era an upstream speaks (modern-tasks.md §3.4).
type Era int

const (
	// EraUnknown: the probe could not decide (the upstream is unreachable).
	EraUnknown Era = iota
	// EraModern: per-request _meta, 2026-07-28.
	EraModern
	// EraLegacy: the initialize handshake, 2025-11-25 and earlier.
	EraLegacy
)

func (e Era) String() string {
	switch e {
	case EraModern:
		return "modern"
	case EraLegacy:
		return "legacy"
	}
	return "unknown"
}

// ProbeEra decides the upstream's era with server/discover (M-06, M-07):
// a DiscoverResult, or a recognised modern error (-32022, -32020, -32021),
// means modern; any other answer (another JSON-RPC error, an HTTP error
// without a JSON-RPC body, a result that is not a DiscoverResult) means legacy.
// The decision never rests on one particular error code. An unreachable
// upstream gives EraUnknown and the error; on stdio a probe that times out
// (ctx deadline) means legacy, as a legacy server may not answer at all. An
// unreachable upstream gives EraUnknown and the ErrUnavailable error; the caller caches
// the answer and re-probes when it stops holding (M-08).
func (c *Client) ProbeEra(ctx context.Context) (Era, error) {
	d, err := c.Discover(ctx, CallOptions{})
	if err == nil {
		if d.SupportsVersion(modern.ProtocolVersion) || len(d.SupportedVersions) > 0 {
			return EraModern, nil
		}
		return EraLegacy, nil
	}
	var we *jsonrpc.Error
	switch {
	case c.Shared && errors.Is(err, context.DeadlineExceeded):
		// stdio: a legacy server may stay silent on an unknown method (§3.4).
		return EraLegacy, nil
	case errors.Is(err, ErrUnavailable), errors.Is(err, context.Canceled):
		return EraUnknown, err
	case errors.As(err, &we) && isModernCode(we.Code):
		return EraModern, nil
	}
	return EraLegacy, nil
}

func isModernCode(code int64) bool {
	switch code {
	case rpc.CodeUnsupportedProtocolVersion, rpc.CodeHeaderMismatch, rpc.CodeMissingRequiredClientCapability:
		return true
	}
	return false
}
