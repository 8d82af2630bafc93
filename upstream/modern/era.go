package modernup

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
// M-07). The era that matters to the bridge is the one of the upstream's
// tasks, so a DiscoverResult is read with TasksEra: modern when it names a
// modern revision and does not keep the 2025-11-25 tasks capability in place
// of the extension. Also modern: a recognised modern error (-32020, -32021,
// or -32022 whose data.supported names a modern revision). Legacy: any other
// answer (another JSON-RPC error, an HTTP error without a JSON-RPC body, a
// result that is not a DiscoverResult) and, on stdio, no answer before ctx's
// deadline. The decision never rests on one
// particular error code. An unreachable upstream gives EraUnknown and the
// ErrUnavailable error; an upstream that refuses the probe's credentials
// (HTTP 401/403) gives EraUnknown and the ErrUnauthorized error. The caller caches the answer and re-probes when it
// stops holding (M-08).
func (c *Client) ProbeEra(ctx context.Context) (Era, error) {
	return c.ProbeEraAs(ctx, "")
}

// ProbeEraAs is ProbeEra with authorization as the probe's Authorization
// header ("" for none): an upstream that requires authorization answers
// the probe of a request that carries valid credentials.
func (c *Client) ProbeEraAs(ctx context.Context, authorization string) (Era, error) {
	d, err := c.Discover(ctx, CallOptions{Authorization: authorization})
	if err == nil {
		return TasksEra(d), nil
	}
	var we *jsonrpc.Error
	switch {
	case c.Shared && errors.Is(err, context.DeadlineExceeded):
		// stdio: a legacy server may stay silent on an unknown method (§3.4).
		return EraLegacy, nil
	case errors.Is(err, ErrUnavailable), errors.Is(err, context.Canceled), errors.Is(err, ErrUnauthorized):
		// A 401/403 is the upstream's HTTP layer speaking, not its MCP
		// era: the probe is repeated with a request's credentials.
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

// TasksEra is the era of a DiscoverResult's tasks. A server that speaks no
// modern revision is legacy. A server that speaks 2026-07-28 but advertises
// the 2025-11-25 capabilities.tasks and not the io.modelcontextprotocol/tasks
// extension (mcp-go v1.2.1 does) keeps the legacy task shapes on modern
// requests too — a task param, nested CreateTaskResult, tasks/get in the v1
// shape, -32601 for a required tool called without "task" — which the
// extension forbids (M-66: no legacy tasks capability under a version that
// includes the extension); its tasks need the modern face, so it is legacy
// here, and the bridge speaks 2025-11-25 to it (it accepts initialize). A
// modern server with the extension, or with no tasks at all, is modern.
func TasksEra(d *modern.DiscoverResult) Era {
	if d == nil || !anyModern(d.SupportedVersions) {
		return EraLegacy // answers discover but speaks no modern revision
	}
	if _, legacyTasks := d.Capabilities.Extra["tasks"]; legacyTasks && !d.Capabilities.HasTasksExtension() {
		return EraLegacy
	}
	return EraModern
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
