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

// ProbeEra decides the upstream's era with server/discover (§3.4, M-06,
// M-07). Modern: a DiscoverResult naming a modern revision, or a recognised
// modern error (-32020, -32021, or -32022 whose data.supported names a modern
// revision). Legacy: any other answer (another JSON-RPC error, an HTTP error
// without a JSON-RPC body, a result that is not a DiscoverResult) and, on
// stdio, no answer before ctx's deadline. The decision never rests on one
// particular error code. An unreachable upstream gives EraUnknown and the
// ErrUnavailable error. The caller caches the answer and re-probes when it
// stops holding (M-08).
func (c *Client) ProbeEra(ctx context.Context) (Era, error) {
	d, err := c.Discover(ctx, CallOptions{})
	if err == nil {
		if anyModern(d.SupportedVersions) {
			return EraModern, nil
		}
		return EraLegacy, nil // answers discover but speaks no modern revision
	}
	var we *jsonrpc.Error
	switch {
	case c.Shared && errors.Is(err, context.DeadlineExceeded):
		// stdio: a legacy server may stay silent on an unknown method (§3.4).
		return EraLegacy, nil
	case errors.Is(err, ErrUnavailable), errors.Is(err, context.Canceled):
		return EraUnknown, err
	case errors.As(err, &we) && we.Code == rpc.CodeUnsupportedProtocolVersion:
		// A modern error, but it names what the server does speak: a server
		// that supports no modern revision is served as legacy.
		if d, ok := modern.UnsupportedVersionOf(we); ok && !anyModern(d.Supported) {
			return EraLegacy, nil
		}
		return EraModern, nil
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

// anyModern reports whether a version list holds a per-request-_meta revision
// (2026-07-28 or later; version strings are dates and sort as such).
func anyModern(versions []string) bool {
	for _, v := range versions {
		if v >= modern.ProtocolVersion {
			return true
		}
	}
	return false
}
